import { randomUUID } from 'node:crypto';
import type { Sql } from '../../platform/db/index.ts';
import { signDashboard } from '../../platform/dashboard-signature.ts';
import { pageDigest, pageKey } from '../../platform/dashboard-pages.ts';
import type { ObjectStore } from '../../platform/objects/index.ts';
import * as store from '../store.ts';
import { renderDashboard, type PageInput } from './page.ts';

// Step 9: the signed page goes into the object store before its row, so a row never points at nothing. The row
// keeps the page's key and sha256: the runtime fetches the page by that key and refuses bytes of any other digest.
export type PageStore = { db: Sql; pages: ObjectStore; hmacKey: string; baseUrl: string };

export async function publishDashboard(
  deps: PageStore,
  input: Omit<PageInput, 'createdAt' | 'title'> & { owner: string },
): Promise<{ id: string; url: string }> {
  const id = randomUUID();
  const title = input.question.length > 80 ? `${input.question.slice(0, 77)}...` : input.question;
  const page = signDashboard(renderDashboard({ ...input, title, createdAt: new Date() }), deps.hmacKey, { id, owner: input.owner });
  const bytes = Buffer.from(page, 'utf8');
  const object_key = pageKey(id);
  await deps.pages.put(object_key, bytes, { contentType: 'text/html; charset=utf-8', contentLength: bytes.length });
  await store.insertDashboard(deps.db, {
    id,
    owner: input.owner,
    title,
    question: input.question,
    sql: input.sql,
    columns: input.columns,
    object_key,
    digest: pageDigest(bytes),
  });
  return { id, url: `${deps.baseUrl.replace(/\/$/, '')}/d/${id}` };
}
