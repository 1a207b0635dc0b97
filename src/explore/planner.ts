import { questionWords, type CatalogEntry } from './catalog.ts';
import { lookupTable } from '../platform/lookup-table.ts';

// The offline planner: with no language model configured, simple questions over the allowed tables still get an
// answer. It knows five shapes: a count, a count or measure grouped by a dimension (joined through a `<x>key`
// column when the dimension is another table, or a year, quarter, month, week or day of a date column), the top N
// rows by a measure, an equality filter, and the N rows whose text is closest in meaning to a phrase (semantic_distance,
// docs/explore.md "Hybrid SQL"). It answers exactly what was asked or not at all: a question it reads
// only in part ("how many orders per colour", "how many orders in 1995") is refused with the part it cannot apply,
// never answered as the plain count. Anything else is left to a language model.

export type Plan = { sql: string; intent: string; tables: string[] };
/** A question the planner read but cannot answer exactly: why, in words the asker can act on. */
export type Refusal = { refusal: string };

const AGGREGATES: Record<string, string> = {
  total: 'sum',
  sum: 'sum',
  average: 'avg',
  avg: 'avg',
  mean: 'avg',
  maximum: 'max',
  max: 'max',
  highest: 'max',
  minimum: 'min',
  min: 'min',
  lowest: 'min',
};

const stem = (w: string) => (w.endsWith('ies') ? `${w.slice(0, -3)}y` : w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);
const body = (column: string) => column.split('_').slice(1).join('_') || column;

export function planQuestion(question: string, tables: readonly CatalogEntry[]): Plan | Refusal | undefined {
  const q = question
    .toLowerCase()
    .replace(/[?!.]+$/, '')
    .trim();
  const words = questionWords(q);
  const tableFor = (word: string) => tables.find((t) => stem(t.name) === stem(word));
  const mentioned = words.map(tableFor).filter((t): t is CatalogEntry => !!t);

  const closest = closestTo(question, tables, tableFor);
  if (closest) return closest;

  const top = /\btop\s+(\d+)\s+(\w+)\s+by\s+(.+)$/.exec(q);
  if (top) {
    const table = tableFor(top[2]!);
    const measure = table && findColumn(table, top[3]!);
    if (table && measure) {
      return {
        sql: `SELECT * FROM ${table.fqn} ORDER BY ${measure} DESC LIMIT ${Number(top[1])}`,
        intent: `top ${top[1]} ${table.name} by ${measure}`,
        tables: [table.fqn],
      };
    }
  }

  const grouped = /^(.*?)\s+(?:per|by|for each|in each|grouped by)\s+([\w ]+)$/.exec(q);
  if (grouped) {
    const [, left, dimensionText] = grouped as unknown as [string, string, string];
    const aggregate = Object.keys(AGGREGATES).find((a) => new RegExp(`\\b${a}\\b`).test(left));
    const candidates = mentioned.length > 0 ? mentioned : tables;
    const subject = aggregate
      ? candidates.find((t) => findColumn(t, left.replace(aggregate, '')))
      : mentioned.find((t) => new RegExp(`\\b${t.name}`).test(left));
    if (subject) {
      const measure = aggregate ? findColumn(subject, left.replace(aggregate, '')) : undefined;
      const value = measure && aggregate ? `${AGGREGATES[aggregate]}(s.${measure})` : 'count(*)';
      const valueName = measure && aggregate ? `${AGGREGATES[aggregate]}_${body(measure)}` : subject.name;
      const dimension = groupBy(subject, dimensionText.trim(), tables);
      if ('refusal' in dimension) return dimension;
      // a time grain reads in time order; any other dimension by its value, largest first
      const order = dimension.time ? dimension.name : `${valueName} DESC`;
      return {
        sql: `SELECT ${dimension.select} AS ${dimension.name}, ${value} AS ${valueName} FROM ${subject.fqn} s${dimension.join} GROUP BY ${dimension.select} ORDER BY ${order}`,
        intent: `${valueName} per ${dimension.name}`,
        tables: [subject.fqn, ...dimension.tables],
      };
    }
    // "per" or "by" with no table it knows to count: never the ungrouped count below
    return undefined;
  }

  const count = /\bhow many\s+(\w+)/.exec(q) ?? /\bcount (?:of |the )?(\w+)/.exec(q);
  if (count) {
    const table = tableFor(count[1]!);
    if (table) {
      const filter = /\b(?:where|with)\s+([\w ]+?)\s+(?:is|=|equals)\s+'?([\w#-]+)'?$/.exec(q);
      const column = filter && findColumn(table, filter[1]!);
      if (filter && !column) return { refusal: `no column of ${table.name} matches '${filter[1]}'` };
      const where = column ? ` WHERE upper(${column}) = upper('${filter![2]!.replace(/'/g, "''")}')` : '';
      const unread = questionWords(q.replace(count[0], ' ').replace(filter?.[0] ?? '', ' ')).filter((w) => !FILLER.has(w));
      if (unread.length > 0)
        return { refusal: `it counts all ${table.name}, or those where one column equals a value, and cannot apply '${unread.join(' ')}'` };
      return {
        sql: `SELECT count(*) AS ${table.name} FROM ${table.fqn}${where}`,
        intent: `count of ${table.name}${where ? ' filtered' : ''}`,
        tables: [table.fqn],
      };
    }
  }
  return undefined;
}

// "the 10 orders of 1995 whose comment is closest to 'delayed shipment'": ranked by meaning (docs/explore.md,
// "Hybrid SQL"); the phrase is kept as written, in its own case
const CLOSEST =
  /^(?:(?:show|list|find|give me)\s+)?(?:me\s+)?(?:the\s+)?(?:(\d+)\s+)?(\w+)(?:\s+(?:of|in|from)\s+(\d{4}))?\s+whose\s+([\w ]+?)\s+(?:is|are)\s+(?:the\s+)?closest\s+to\s+'([^']+)'\s*[?!.]*$/i;

function closestTo(question: string, tables: readonly CatalogEntry[], tableFor: (word: string) => CatalogEntry | undefined) {
  const m = CLOSEST.exec(question.trim());
  if (!m) return undefined;
  const [, count, noun, year, columnText, phrase] = m as unknown as [
    string,
    string | undefined,
    string,
    string | undefined,
    string,
    string,
  ];
  const table = tableFor(noun.toLowerCase());
  if (!table) return tables.length > 0 ? ({ refusal: `no table it may read matches '${noun}'` } satisfies Refusal) : undefined;
  const column = findColumn(table, columnText);
  if (!column) return { refusal: `no column of ${table.name} matches '${columnText}'` } satisfies Refusal;
  const date = table.columns.find((c) => isDate(c.type));
  if (year && !date) return { refusal: `${table.name} has no date column to apply '${year}'` } satisfies Refusal;
  const where = year ? ` WHERE extract(year FROM ${date!.name}) = ${Number(year)}` : '';
  const k = Number(count ?? 10);
  return {
    sql: `SELECT * FROM ${table.fqn}${where} ORDER BY semantic_distance(${column}, '${phrase.replaceAll("'", "''")}') LIMIT ${k}`,
    intent: `${k} ${table.name}${year ? ` of ${year}` : ''} whose ${column} is closest to '${phrase}'`,
    tables: [table.fqn],
  } satisfies Plan;
}

/** The column whose name (without its table prefix) best matches the words, e.g. "total price" -> o_totalprice. */
const ABBREVIATIONS: Record<string, string> = lookupTable({ account: 'acct', balance: 'bal', available: 'avail', quantity: 'qty' });

function findColumn(table: CatalogEntry, text: string): string | undefined {
  const words = questionWords(text).map((w) => ABBREVIATIONS[w] ?? w);
  if (words.length === 0) return undefined;
  const joined = words.join('');
  let best: { name: string; score: number } | undefined;
  for (const c of table.columns) {
    const b = body(c.name).replace(/_/g, '');
    const score = b === joined ? 3 : words.every((w) => b.includes(w)) ? 2 : words.some((w) => w.length > 3 && b.includes(w)) ? 1 : 0;
    if (score > (best?.score ?? 0)) best = { name: c.name, score };
  }
  return best?.name;
}

/** Words a count question may hold besides what it counts ("how many orders are there in total"). */
const FILLER = new Set([
  'do',
  'we',
  'have',
  'exist',
  'total',
  'altogether',
  'overall',
  'record',
  'row',
  'database',
  'data',
  'sample',
  'now',
]);

/** A grain of time and the expression that groups a date by it, the same in Trino and Postgres. */
const TIME_GRAINS: Record<string, (column: string) => string> = {
  year: (c) => `extract(year FROM ${c})`,
  quarter: (c) => `date_trunc('quarter', ${c})`,
  month: (c) => `date_trunc('month', ${c})`,
  week: (c) => `date_trunc('week', ${c})`,
  day: (c) => c,
};
const isDate = (type: string) => type === 'date' || type.startsWith('timestamp');

type Dimension = { select: string; name: string; join: string; tables: string[]; time?: boolean };

function groupBy(subject: CatalogEntry, text: string, tables: readonly CatalogEntry[]): Dimension | Refusal {
  const grain = stem(text.split(' ').at(-1)!);
  const byTime = TIME_GRAINS[grain];
  if (byTime) {
    const dates = subject.columns.filter((c) => isDate(c.type));
    const named =
      text.split(' ').length > 1 ? findColumn({ ...subject, columns: dates }, text.split(' ').slice(0, -1).join(' ')) : undefined;
    const column = named ?? dates[0]?.name;
    if (!column) return { refusal: `${subject.name} has no date column to group by ${grain}` };
    return { select: byTime(`s.${column}`), name: grain, join: '', tables: [], time: true };
  }
  const other = tables.find((t) => t !== subject && stem(t.name) === stem(text.split(' ').at(-1)!));
  if (other) {
    const key = subject.columns.find((c) => c.name.endsWith(`_${other.name}key`));
    const otherKey = other.columns.find((c) => c.name.endsWith(`_${other.name}key`));
    const label = other.columns.find((c) => c.name.endsWith('_name'));
    if (key && otherKey && label) {
      return {
        select: `d.${label.name}`,
        name: other.name,
        join: ` JOIN ${other.fqn} d ON s.${key.name} = d.${otherKey.name}`,
        tables: [other.fqn],
      };
    }
  }
  const column = findColumn(subject, text);
  return column
    ? { select: `s.${column}`, name: body(column), join: '', tables: [] }
    : { refusal: `no column of ${subject.name} matches '${text}'` };
}
