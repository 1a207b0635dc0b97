import { z } from '@hono/zod-openapi';
import { unprocessable } from '../../platform/errors.ts';

// The chart of a result, one shape for the console, POST /query, PUT /dashboards/{id}/chart and the published page:
// a type and, except for a table, the columns on each axis. The console proposes one with the same rule as
// proposeChart below (src/explore/console/chart.js; tests/unit/explore-charts.test.ts holds both to one table).
export const CHART_TYPES = ['bar', 'line', 'scatter', 'table'] as const;

const columnName = z.string().trim().min(1, 'a column name must not be empty').max(200);
export const chartSpec = z
  .object({ type: z.enum(CHART_TYPES), x: columnName.optional(), y: columnName.optional() })
  .superRefine((c, ctx) => {
    if (c.type === 'table') return;
    for (const axis of ['x', 'y'] as const)
      if (!c[axis]) ctx.addIssue({ code: 'custom', path: [axis], message: `a ${c.type} chart needs the ${axis} column` });
  })
  .openapi({ description: 'How a result is drawn: a table, or a bar, line or scatter chart of column y over column x' });
export type ChartSpec = z.infer<typeof chartSpec>;

export type Column = { name: string; type: string };
export const isNumeric = (type: string) => /^(tinyint|smallint|integer|bigint|real|double|decimal.*|numeric.*)$/i.test(type);
export const isTemporal = (type: string) => /^(date|timestamp.*|time.*)$/i.test(type);

/**
 * The chart that fits the columns: a date or time column and a numeric one, a line over time; a label and a
 * numeric, bars; two numerics, a scatter; anything else, the table.
 */
export function proposeChart(columns: Column[]): ChartSpec {
  const numeric = columns.filter((c) => isNumeric(c.type));
  const time = columns.find((c) => isTemporal(c.type));
  const label = columns.find((c) => !isNumeric(c.type) && !isTemporal(c.type));
  const value = numeric[0];
  if (time && value) return { type: 'line', x: time.name, y: value.name };
  if (label && value) return { type: 'bar', x: label.name, y: value.name };
  if (numeric.length >= 2) return { type: 'scatter', x: numeric[0]!.name, y: numeric[1]!.name };
  return { type: 'table' };
}

/** A chart must name columns the result has, and plot numbers: y is numeric, and both axes of a scatter. */
export function checkChart(chart: ChartSpec, columns: Column[]): ChartSpec {
  if (chart.type === 'table') return { type: 'table' };
  const find = (axis: 'x' | 'y') => {
    const col = columns.find((c) => c.name === chart[axis]);
    if (!col)
      throw unprocessable(
        `The chart's ${axis} column '${chart[axis]}' is not a column of the result (${columns.map((c) => c.name).join(', ')}).`,
      );
    return col;
  };
  const [x, y] = [find('x'), find('y')];
  for (const col of chart.type === 'scatter' ? [x, y] : [y])
    if (!isNumeric(col.type)) throw unprocessable(`A ${chart.type} chart plots numbers: column '${col.name}' is ${col.type}.`);
  return { type: chart.type, x: x.name, y: y.name };
}
