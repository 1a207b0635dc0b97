// @ts-check
// Which chart fits a result, by its columns: the console's copy of proposeChart in src/explore/dashboards/chart.ts
// (the service proposes the same when POST /query names no chart); tests/unit/explore-charts.test.ts holds both to
// one table. No DOM here, so the test can import it.

/** @typedef {{ type: 'bar' | 'line' | 'scatter' | 'table', x?: string, y?: string }} ChartSpec */
/** @typedef {{ name: string, type: string }} Column */

/** @param {string} type */
export const isNumeric = (type) => /^(tinyint|smallint|integer|bigint|real|double|decimal.*|numeric.*)$/i.test(type);
/** @param {string} type */
export const isTemporal = (type) => /^(date|timestamp.*|time.*)$/i.test(type);

/**
 * A date or time column and a numeric one: a line over time; a label and a numeric: bars; two numerics: a scatter;
 * anything else: the table.
 * @param {Column[]} columns
 * @returns {ChartSpec}
 */
export function proposeChart(columns) {
  const numeric = columns.filter((c) => isNumeric(c.type));
  const time = columns.find((c) => isTemporal(c.type));
  const label = columns.find((c) => !isNumeric(c.type) && !isTemporal(c.type));
  const value = numeric[0];
  if (time && value) return { type: 'line', x: time.name, y: value.name };
  if (label && value) return { type: 'bar', x: label.name, y: value.name };
  if (numeric.length >= 2) return { type: 'scatter', x: numeric[0]?.name, y: numeric[1]?.name };
  return { type: 'table' };
}
