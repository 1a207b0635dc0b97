import { randomUUID } from 'node:crypto';
import { appendAudit } from '../../platform/audit/index.ts';
import { renderCards, type Card } from '../../platform/dashboard-cards.ts';
import { MAX_PAGE_BYTES, pageDigest, pageKey } from '../../platform/dashboard-pages.ts';
import { signDashboard, verifyDashboard } from '../../platform/dashboard-signature.ts';
import { conflict, forbidden, notFound, unprocessable } from '../../platform/errors.ts';
import type { Caller } from '../../platform/identity.ts';
import { readObject } from '../../platform/objects/index.ts';
import type { ExploreDeps } from '../deps.ts';
import * as store from '../store.ts';
import { readyPage } from './drawing.ts';
import { decideDashboard, type DashboardView, view } from './sharing.ts';

/**
 * POST /dashboards: a dashboard of several cards, each a dashboard the caller owns, as its page was signed. Only
 * one's own: a card of someone else's would show their (redacted for them) rows to whoever this one is shared with.
 * A card the caller may not open does not exist (404); one the caller may open but does not own is 403. Each card's
 * page must still be the one explore published (its digest) and verify with the current key.
 */
export async function buildDashboard(
  deps: ExploreDeps,
  caller: Caller,
  input: { title: string; cards: { dashboard_id: string }[] },
): Promise<DashboardView> {
  const cards: Card[] = [];
  for (const { dashboard_id: id } of input.cards) {
    const found = await store.findDashboard(deps.db, id);
    if (!found || !(await decideDashboard(deps.policy, caller, 'view', found)).allow) throw notFound(`Dashboard '${id}' does not exist.`);
    if (found.owner !== caller.user)
      throw forbidden(`Dashboard '${id}' belongs to ${found.owner}: a dashboard holds only its owner's dashboards.`);
    if (found.cards) throw unprocessable(`Dashboard '${id}' is itself a dashboard of cards: choose the dashboards it was built from.`);
    // a card's page may still be being drawn: it is waited for, and one that could not be drawn is a 409
    const d = await readyPage(deps, id, found);
    const page = d.object_key ? await readObject(deps.pages, d.object_key, MAX_PAGE_BYTES) : undefined;
    if (!page || !d.digest) throw conflict(`Dashboard '${id}' has no page in the store yet: an operator runs \`svc dashboards resign\`.`);
    const signed = page.toString('utf8');
    if (pageDigest(page) !== d.digest || !verifyDashboard(signed, { current: deps.hmacKey }, { id, owner: d.owner }).ok)
      throw conflict(`The page of dashboard '${id}' does not verify with the current key: an operator runs \`svc dashboards resign\`.`);
    cards.push({ id, owner: d.owner, title: d.title, signed });
  }
  const id = randomUUID();
  const body = renderCards({ title: input.title, cards, createdAt: new Date() });
  const bytes = Buffer.from(signDashboard(body, deps.hmacKey, { id, owner: caller.user }), 'utf8');
  const object_key = pageKey(id);
  await deps.pages.put(object_key, bytes, { contentType: 'text/html; charset=utf-8', contentLength: bytes.length });
  const row = {
    id,
    owner: caller.user,
    title: input.title,
    question: '',
    sql: '',
    columns: [],
    chart: null,
    cards: cards.map((c) => c.id),
    object_key,
    digest: pageDigest(bytes),
  };
  await deps.db.transaction(async (tx) => {
    await store.insertDashboard(tx, row);
    await appendAudit(tx, {
      service: 'explore',
      action: 'dashboard_build',
      actor: caller.user,
      detail: { dashboard_id: id, cards: row.cards },
    });
  });
  return view(deps, (await store.findDashboard(deps.db, id))!);
}
