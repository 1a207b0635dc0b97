import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from '../../platform/db/index.ts';
import { signDashboard } from '../../platform/dashboard-signature.ts';
import * as store from '../store.ts';
import { renderDashboard, type PageInput } from './page.ts';

// Step 9: the page file is written (signed, atomically) before its row, so a row never points at nothing.
export async function publishDashboard(
  deps: { db: Sql; dir: string; hmacKey: string; baseUrl: string },
  input: Omit<PageInput, 'createdAt' | 'title'> & { owner: string },
): Promise<{ id: string; url: string; file: string }> {
  const id = randomUUID();
  const title = input.question.length > 80 ? `${input.question.slice(0, 77)}...` : input.question;
  const page = signDashboard(renderDashboard({ ...input, title, createdAt: new Date() }), deps.hmacKey);
  await mkdir(deps.dir, { recursive: true });
  const file = join(deps.dir, `${id}.html`);
  await writeFile(`${file}.tmp`, page, 'utf8');
  await rename(`${file}.tmp`, file);
  await store.insertDashboard(deps.db, { id, owner: input.owner, title, question: input.question, sql: input.sql, columns: input.columns, file });
  return { id, url: `${deps.baseUrl.replace(/\/$/, '')}/d/${id}`, file };
}
