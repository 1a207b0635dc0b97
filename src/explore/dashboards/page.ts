// The standalone dashboard page: title, question, SQL, the (already redacted) rows, the chart drawn at publish
// (chart-svg.ts), and when it was made. No script and no outside resource: it renders the same anywhere. Served under
// DASHBOARD_CSP, which admits the one inline stylesheet by its hash: no style attribute, script or link belongs here.
import { DASHBOARD_STYLE } from '../../platform/dashboard-pages.ts';
import { escapeHtml } from '../../platform/web/pages.ts';

export type PageInput = {
  title: string;
  question: string;
  sql: string;
  columns: { name: string; type: string }[];
  rows: unknown[][];
  maskedColumns: string[];
  createdAt: Date;
  /** The chart as safe SVG markup (chart-svg.ts), or '' for none. */
  chartSvg: string;
};

export function renderDashboard(input: PageInput): string {
  const head = input.columns
    .map((c) => `<th>${escapeHtml(c.name)}${input.maskedColumns.includes(c.name) ? ' <span class="masked">redacted</span>' : ''}</th>`)
    .join('');
  const body = input.rows.map((r) => `<tr>${r.map((v) => `<td>${escapeHtml(v)}</td>`).join('')}</tr>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(input.title)}</title>
<style>${DASHBOARD_STYLE}</style>
</head><body>
<h1>${escapeHtml(input.title)}</h1>
<p class="question">${escapeHtml(input.question)}</p>
${input.chartSvg ? `<figure>${input.chartSvg}</figure>` : ''}
<table><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table>
<p>${input.rows.length} rows</p>
<pre class="sql">${escapeHtml(input.sql)}</pre>
<p><small>Made ${input.createdAt.toISOString()}</small></p>
</body></html>
`;
}
