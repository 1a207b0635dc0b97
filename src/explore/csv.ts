// POST /query/csv's file: RFC 4180 (CRLF line ends, a field quoted when it holds a comma, quote or line break, a quote
// doubled), a header row of the column names, then the redacted rows exactly as the answer shows them.

/**
 * A text cell a spreadsheet would run as a formula (it starts with =, +, -, @, a tab or a carriage return) gets a
 * leading apostrophe, as OWASP's CSV injection advice says; a text that is a plain number ("-12.5") is kept as it is.
 */
const FORMULA = /^[=+\-@\t\r]/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'string') text = FORMULA.test(value) && !NUMBER.test(value) ? `'${value}` : value;
  else if (value instanceof Date) text = value.toISOString();
  else if (typeof value === 'object') text = JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v));
  else text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(columns: readonly { name: string }[], rows: readonly unknown[][]): string {
  const lines = [columns.map((c) => csvCell(c.name)), ...rows.map((row) => row.map(csvCell))];
  return `${lines.map((cells) => cells.join(',')).join('\r\n')}\r\n`;
}
