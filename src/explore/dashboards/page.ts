// The standalone dashboard page: title, question, SQL, the (already redacted) rows, a chart chosen from the
// result's shape, and when it was made. No script and no outside resource: it renders the same anywhere. Served under
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
};

const NUMERIC = /^(tinyint|smallint|integer|bigint|real|double|decimal.*)$/;

/** A bar chart when the result is one label column and one numeric column with at most 50 rows. */
function chart(input: PageInput): string {
  const [label, value] = input.columns;
  if (input.columns.length !== 2 || !label || !value || !NUMERIC.test(value.type) || input.rows.length === 0 || input.rows.length > 50)
    return '';
  const values = input.rows.map((r) => Number(r[1]) || 0);
  const max = Math.max(...values, 1);
  const barHeight = 18;
  const bars = input.rows
    .map((r, i) => {
      const width = Math.round((values[i]! / max) * 400);
      const y = i * (barHeight + 4);
      return `<text x="0" y="${y + 13}" font-size="12">${escapeHtml(r[0])}</text><rect x="160" y="${y}" width="${width}" height="${barHeight}" fill="#2f6fae"/><text x="${166 + width}" y="${y + 13}" font-size="12">${escapeHtml(r[1])}</text>`;
    })
    .join('');
  return `<figure><svg role="img" aria-label="${escapeHtml(value.name)} by ${escapeHtml(label.name)}" width="640" height="${input.rows.length * (barHeight + 4)}">${bars}</svg></figure>`;
}

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
${chart(input)}
<table><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table>
<p>${input.rows.length} rows</p>
<pre class="sql">${escapeHtml(input.sql)}</pre>
<p><small>Made ${input.createdAt.toISOString()}</small></p>
</body></html>
`;
}
