// Unknown flags are refused with the nearest valid one. yargs refuses them (`.strict()`) but names no alternative, so
// this check runs first, before yargs' validation, against the options of the command being run.
import { UsageError } from './usage-error.ts';

/** The yargs instance a middleware is called with: its second argument, which yargs' published types leave out. */
type CommandOptions = { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } };

/** A yargs middleware (run before validation) that throws a UsageError naming the closest valid flag. */
export function refuseUnknownFlags(rawArgs: string[]) {
  return (argv: { _: (string | number)[] }, y?: CommandOptions): void => {
    if (!y) return;
    const options = y.getOptions();
    const known = new Set([...Object.keys(options.key), ...Object.values(options.alias).flat()]);
    for (const token of flagsIn(rawArgs)) {
      const name = token.replace(/^--?/, '').split('=')[0]!;
      if (known.has(name) || (name.startsWith('no-') && known.has(name.slice(3)))) continue;
      const near = closest(
        name,
        [...known].filter((k) => k.length > 1),
      );
      throw new UsageError(`unknown flag ${token.split('=')[0]} for 'svc ${argv._.join(' ')}'${near ? ` (did you mean --${near}?)` : ''}`);
    }
  };
}

/** The flags of a command line: tokens that start with a dash, up to `--`, that are not negative numbers. */
function flagsIn(args: string[]): string[] {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).filter((a) => /^--?[^\d-]/.test(a));
}

/** The candidate at the smallest edit distance, when it is close enough to be what was meant. */
export function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** Levenshtein distance, where swapping two neighbouring letters counts as one edit. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
