import { COMPOSITE_STYLE } from './dashboard-pages.ts';
import { signatureOf, signDashboard, verifyDashboard, type DashboardKeys, type PageIdentity } from './dashboard-signature.ts';
import { escapeHtml } from './web/pages.ts';

// A dashboard of several cards: one page that holds, for each card, the signed page of a dashboard its owner
// published, as it was signed. Each card is shown in an <iframe sandbox srcdoc> (no script, an origin of its own;
// the card inherits the page's CSP, under which its own stylesheet is admitted by hash), and carries its dashboard's
// id, owner and signature, so the runtime can verify every card as well as the page that holds them. Shared by
// explore, which builds these pages, and the runtime, which verifies them.
export type Card = PageIdentity & { title: string; signed: string };

const MARK = '<meta name="svc-dashboard" content="cards">';
// Exactly the element renderCards writes: the runtime reads cards back with it.
const CARD =
  /<iframe class="card" sandbox="" title="[^"]*" data-dashboard="([^"]*)" data-owner="([^"]*)" data-signature="([0-9a-f]{64})" srcdoc="([^"]*)"><\/iframe>/g;

export function renderCards(input: { title: string; cards: Card[]; createdAt: Date }): string {
  const frames = input.cards.map((card) => {
    const at = card.signed.indexOf('\n');
    const signature = signatureOf(card.signed);
    if (at < 0 || !signature) throw new Error(`the page of card '${card.id}' has no signature line`);
    return `<iframe class="card" sandbox="" title="${escapeHtml(card.title)}" data-dashboard="${escapeHtml(card.id)}" data-owner="${escapeHtml(card.owner)}" data-signature="${signature}" srcdoc="${escapeHtml(card.signed.slice(at + 1))}"></iframe>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${MARK}<title>${escapeHtml(input.title)}</title>
<style>${COMPOSITE_STYLE}</style>
</head><body>
<h1>${escapeHtml(input.title)}</h1>
<div class="cards">
${frames.join('\n')}
</div>
<p><small>${input.cards.length} cards. Made ${input.createdAt.toISOString()}</small></p>
</body></html>
`;
}

const unescapeHtml = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);

/** The cards of a page (its body, after the signature line) with each card's signed page; none for a single page. */
export function cardsOf(body: string): { id: string; owner: string; signed: string }[] {
  return [...body.matchAll(CARD)].map(([, id, owner, signature, srcdoc]) => ({
    id: unescapeHtml(id!),
    owner: unescapeHtml(owner!),
    signed: `# SVC_SIG: ${signature}\n${unescapeHtml(srcdoc!)}`,
  }));
}

/**
 * Why a page of cards may not be served, or undefined when it may: every frame in it is a card in the exact form
 * renderCards writes, owned by the page's owner, whose signature verifies for its own id and owner. A page that is
 * not a page of cards has nothing more to check.
 */
export function refuseCards(body: string, keys: DashboardKeys, owner: string): string | undefined {
  if (!body.includes(MARK)) return undefined;
  const cards = cardsOf(body);
  const frames = body.match(/<iframe\b/gi)?.length ?? 0;
  if (cards.length === 0 || frames !== cards.length) return 'a card of the dashboard is not in the form explore writes';
  for (const card of cards) {
    if (card.owner !== owner) return `card '${card.id}' belongs to ${card.owner}, not to the dashboard's owner`;
    const verified = verifyDashboard(card.signed, keys, { id: card.id, owner: card.owner });
    if (!verified.ok) return `card '${card.id}': ${verified.reason}`;
  }
  return undefined;
}

/** The page of cards with every card signed again with `key` (a key rotation); undefined if a card does not verify. */
export function resignCards(body: string, keys: DashboardKeys, key: string): string | undefined {
  let failed = false;
  const next = body.replace(CARD, (frame, id: string, owner: string, signature: string, srcdoc: string) => {
    const identity = { id: unescapeHtml(id), owner: unescapeHtml(owner) };
    const signed = `# SVC_SIG: ${signature}\n${unescapeHtml(srcdoc)}`;
    const verified = verifyDashboard(signed, keys, identity);
    if (!verified.ok) {
      failed = true;
      return frame;
    }
    return frame.replace(`data-signature="${signature}"`, `data-signature="${signatureOf(signDashboard(verified.body, key, identity))}"`);
  });
  return failed ? undefined : next;
}
