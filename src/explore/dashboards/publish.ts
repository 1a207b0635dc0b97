import { randomUUID } from 'node:crypto';
import type { Sql } from '../../platform/db/index.ts';
import { signDashboard } from '../../platform/dashboard-signature.ts';
import { MAX_PAGE_BYTES, pageDigest, pageKey } from '../../platform/dashboard-pages.ts';
import { readObject, type ObjectStore } from '../../platform/objects/index.ts';
import * as store from '../store.ts';
import { checkChart, proposeChart, type ChartSpec } from './chart.ts';
import { renderChartSvg } from './chart-svg.ts';
import { renderDashboard, type PageInput } from './page.ts';

// Step 9: the signed page goes into the object store before its row, so a row never points at nothing. The row
// keeps the page's key and sha256: the runtime fetches the page by that key and refuses bytes of any other digest.
// Beside the page, what it was drawn from (the redacted rows as published), so a new chart redraws the same rows.
export type PageStore = { db: Sql; pages: ObjectStore; hmacKey: string; baseUrl: string };

/** What a page shows apart from its chart: written once at publish, read when the chart changes. */
export type PageContent = Omit<PageInput, 'createdAt' | 'chartSvg'> & { createdAt: string };

export const contentKey = (id: string) => `${id}.content.json`;

export async function readContent(pages: ObjectStore, id: string): Promise<PageContent | undefined> {
  const bytes = await readObject(pages, contentKey(id), MAX_PAGE_BYTES);
  return bytes ? (JSON.parse(bytes.toString('utf8')) as PageContent) : undefined;
}

/** Draws the chart, renders and signs the page and stores it under `key`; its digest for the row. */
export async function writePage(
  deps: PageStore,
  page: { id: string; owner: string; key: string; content: PageContent; chart: ChartSpec },
): Promise<{ object_key: string; digest: string }> {
  const { content } = page;
  const chartSvg = await renderChartSvg(page.chart, content.columns, content.rows);
  const html = renderDashboard({ ...content, createdAt: new Date(content.createdAt), chartSvg });
  const bytes = Buffer.from(signDashboard(html, deps.hmacKey, { id: page.id, owner: page.owner }), 'utf8');
  await deps.pages.put(page.key, bytes, { contentType: 'text/html; charset=utf-8', contentLength: bytes.length });
  return { object_key: page.key, digest: pageDigest(bytes) };
}

export async function publishDashboard(
  deps: PageStore,
  input: Omit<PageContent, 'createdAt' | 'title'> & { owner: string; chart?: ChartSpec | undefined },
): Promise<{ id: string; url: string }> {
  const id = randomUUID();
  const { owner, chart: asked, ...shown } = input;
  const title = input.question.length > 80 ? `${input.question.slice(0, 77)}...` : input.question;
  const chart = checkChart(asked ?? proposeChart(input.columns), input.columns);
  const content: PageContent = { ...shown, title, createdAt: new Date().toISOString() };
  const json = Buffer.from(JSON.stringify(content), 'utf8');
  await deps.pages.put(contentKey(id), json, { contentType: 'application/json', contentLength: json.length });
  const page = await writePage(deps, { id, owner, key: pageKey(id), content, chart });
  await store.insertDashboard(deps.db, {
    id,
    owner,
    title,
    question: input.question,
    sql: input.sql,
    columns: input.columns,
    chart,
    cards: null,
    ...page,
  });
  return { id, url: `${deps.baseUrl.replace(/\/$/, '')}/d/${id}` };
}
