import type { Sql } from '../../platform/db/index.ts';
import { signDashboard } from '../../platform/dashboard-signature.ts';
import { MAX_PAGE_BYTES, pageDigest } from '../../platform/dashboard-pages.ts';
import type { Logger } from '../../platform/log.ts';
import { readObject, type ObjectStore } from '../../platform/objects/index.ts';
import type { ChartSpec } from './chart.ts';
import type { Drawings, ExploreDeps } from '../deps.ts';
import type { ChartDrawer } from './chart-svg.ts';
import { renderDashboard, type PageInput } from './page.ts';

// Where a question's page comes from: its content (what it shows apart from its chart), kept beside the page so that
// the page can be drawn after publish and drawn again with another chart; and the page itself, drawn, signed, stored.

export type PageStore = {
  db: Sql;
  pages: ObjectStore;
  hmacKey: string;
  baseUrl: string;
  charts: ChartDrawer;
  drawings: Drawings;
  logger: Logger;
};

/** What a page shows apart from its chart: written once at publish, read when the page is drawn or its chart changes. */
export type PageContent = Omit<PageInput, 'createdAt' | 'chartSvg'> & { createdAt: string };

/** The page store of explore's dependencies. */
export const pageStore = (deps: ExploreDeps): PageStore => ({
  db: deps.db,
  pages: deps.pages,
  hmacKey: deps.hmacKey,
  baseUrl: deps.config.DASHBOARDS_URL,
  charts: deps.charts,
  drawings: deps.drawings,
  logger: deps.logger,
});

export const contentKey = (id: string) => `${id}.content.json`;

export async function readContent(pages: ObjectStore, id: string): Promise<PageContent | undefined> {
  const bytes = await readObject(pages, contentKey(id), MAX_PAGE_BYTES);
  return bytes ? (JSON.parse(bytes.toString('utf8')) as PageContent) : undefined;
}

/** Draws the chart, renders and signs the page and stores it under `key`; its digest for the row. */
export async function writePage(
  deps: Pick<PageStore, 'pages' | 'hmacKey' | 'charts'>,
  page: { id: string; owner: string; key: string; content: PageContent; chart: ChartSpec },
): Promise<{ object_key: string; digest: string }> {
  const { content } = page;
  const chartSvg = await deps.charts.draw(page.chart, content.columns, content.rows);
  const html = renderDashboard({ ...content, createdAt: new Date(content.createdAt), chartSvg });
  const bytes = Buffer.from(signDashboard(html, deps.hmacKey, { id: page.id, owner: page.owner }), 'utf8');
  await deps.pages.put(page.key, bytes, { contentType: 'text/html; charset=utf-8', contentLength: bytes.length });
  return { object_key: page.key, digest: pageDigest(bytes) };
}
