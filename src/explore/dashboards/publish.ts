import { randomUUID } from 'node:crypto';
import type { AuditedWrite } from '../../platform/audit/index.ts';
import { pageKey } from '../../platform/dashboard-pages.ts';
import * as store from '../store.ts';
import { checkChart, proposeChart, type ChartSpec } from './chart.ts';
import { drawLater } from './drawing.ts';
import type { PageContent, PageStore } from './page-store.ts';

// Step 9: the dashboard row goes into the database with no page yet ('drawing'), and POST /query answers. After the
// answer what the page shows (its content) is stored, the chart drawn, the page rendered, signed and stored
// (drawing.ts), and only then does the row name the page's key and sha256: the runtime fetches the page by that key
// and refuses bytes of any other digest, so no one is ever served half a page.

/** A dashboard ready to publish: its row's insert, sent with the question's audit record, and its drawing, started once the row is stored. */
export type PendingDashboard = { id: string; url: string; insert: AuditedWrite; draw(): void };

export function prepareDashboard(
  deps: PageStore,
  input: Omit<PageContent, 'createdAt' | 'title'> & { owner: string; chart?: ChartSpec | undefined },
): PendingDashboard {
  const id = randomUUID();
  const { owner, chart: asked, ...shown } = input;
  const title = input.question.length > 80 ? `${input.question.slice(0, 77)}...` : input.question;
  const chart = checkChart(asked ?? proposeChart(input.columns), input.columns);
  const content: PageContent = { ...shown, title, createdAt: new Date().toISOString() };
  const insert = store.dashboardInsert({
    id,
    owner,
    title,
    question: input.question,
    sql: input.sql,
    columns: input.columns,
    chart,
    cards: null,
    object_key: null,
    digest: null,
  });
  return {
    id,
    url: `${deps.baseUrl.replace(/\/$/, '')}/d/${id}`,
    insert,
    draw: () => drawLater(deps, { id, owner, key: pageKey(id), content, chart }),
  };
}
