export type ChartSpec = { type: 'bar' | 'line' | 'scatter' | 'table'; x?: string | undefined; y?: string | undefined };
export type Column = { name: string; type: string };
export const MAX_CHART_POINTS: number;
export function chartOption(chart: ChartSpec, columns: Column[], rows: unknown[][]): Record<string, unknown> | undefined;
export function loadCharts(): Promise<unknown>;
export function drawChart(chart: ChartSpec, columns: Column[], rows: unknown[][], total?: number): Promise<string>;
export function safeSvg(svg: string, label: string): string;
