import { lookupTable } from '../lookup-table.ts';

// A limit is a token bucket: `capacity` units, refilled evenly over `perSeconds` (so a burst of the whole capacity,
// then capacity/perSeconds a second). Written `N/unit` or `N/<seconds>s`: `60/h`, `100000/day`, `500/90s`; `off`
// for no limit.
export type Rate = { capacity: number; perSeconds: number };
export type Limit = Rate | 'unlimited';

const UNITS: Record<string, number> = lookupTable({
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
});

/** The limit a setting describes, or an error message naming what is wrong. */
export function parseLimit(text: string): Limit | { error: string } {
  const t = text.trim().toLowerCase();
  if (t === 'off' || t === 'unlimited') return 'unlimited';
  const m = /^(\d+)\s*\/\s*(\d+)?\s*([a-z]+)$/.exec(t);
  const unit = m ? UNITS[m[3]!] : undefined;
  if (!m || unit === undefined) return { error: `expected N/unit (e.g. 60/h, 100000/day, 500/90s) or off, got '${text}'` };
  const capacity = Number(m[1]);
  const perSeconds = Number(m[2] ?? 1) * unit;
  if (!Number.isSafeInteger(capacity) || perSeconds <= 0)
    return { error: `expected a whole number of units over a positive time, got '${text}'` };
  return { capacity, perSeconds };
}

export const describeLimit = (l: Limit): string => (l === 'unlimited' ? 'no limit' : `${l.capacity} per ${l.perSeconds} s`);

/** Of several limits (a caller's roles), the most generous: no limit, else the highest refill, then the largest burst. */
export function mostGenerous(limits: Limit[]): Limit | undefined {
  if (limits.includes('unlimited')) return 'unlimited';
  const rates = limits as Rate[];
  return rates.reduce<Rate | undefined>((best, r) => {
    if (!best) return r;
    const a = r.capacity / r.perSeconds;
    const b = best.capacity / best.perSeconds;
    return a > b || (a === b && r.capacity > best.capacity) ? r : best;
  }, undefined);
}
