import { randomUUID } from 'node:crypto';
import type { Sql } from '../db/index.ts';
import { tripToBucket, type Bucket, type Spend } from './bucket.ts';
import type { Rate } from './rates.ts';

// A replica's leases (docs/audit.md, "Usage limits: leases"): units taken from a shared bucket at once and charged
// here, so most charges make no trip to the database. Each bucket's trips go one at a time, in order. A trip
// reports the spends since the last one (each with its time), so the database keeps the balance one bucket charged
// at those times would hold, and a charge is allowed exactly when the units here plus those in the bucket cover it.

export type Taken = { ok: true } | { ok: false; retryAfterSeconds: number };

/** Past its lapse a lease's units are never charged here; the database counts them held this much longer. */
const DATABASE_GRACE_SECONDS = 5;
/** Spends kept here before a trip reports them anyway (the lease is not given back). */
const MOST_SPENDS_KEPT = 256;
const MOST_BUCKETS_KEPT = 1024;

type Held = {
  units: number;
  /** performance.now() past which no unit of the lease is charged here (0: no lease). */
  lapsesAt: number;
  spent: Spend[];
  /** The next lease's size, in units: the cost at first, doubled each time a lease runs dry before it lapses. */
  size: number;
  turn: Promise<unknown>;
  queued: number;
  timer: NodeJS.Timeout | undefined;
  bucket: Bucket;
  rate: Rate;
};

export type Leases = {
  take(bucket: Bucket, rate: Rate, cost: number): Promise<Taken>;
  /** Reports every spend and gives every lease back; a lease not given back is spent when it expires. */
  close(): Promise<void>;
};

/** `leaseMs` 0 takes no lease: every charge is a trip, as before leases. */
export function createLeases(db: Sql, leaseMs: number): Leases {
  const holder = randomUUID();
  const holds = new Map<string, Held>();
  const holdSeconds = leaseMs / 1000 + DATABASE_GRACE_SECONDS;

  const inTurn = <T>(h: Held, fn: () => Promise<T>): Promise<T> => {
    h.queued++;
    const run = h.turn.then(fn).finally(() => h.queued--);
    h.turn = run.catch(() => {});
    return run;
  };

  function chargeHere(h: Held, cost: number): boolean {
    const now = performance.now();
    if (h.units < cost || now >= h.lapsesAt) return false;
    h.units -= cost;
    h.spent.push({ at: now, units: cost });
    if (h.spent.length >= MOST_SPENDS_KEPT) void inTurn(h, () => trip(h, { release: false }));
    return true;
  }

  /** A trip with no charge: the spends reported and, on release, the rest of the lease given back. */
  async function trip(h: Held, opts: { release: boolean }) {
    if (h.spent.length === 0 && (!opts.release || h.units === 0)) return;
    const spent = h.spent;
    h.spent = [];
    const held = h.units;
    const release = opts.release ? held : 0;
    h.units -= release;
    try {
      await tripToBucket(db, h.bucket, h.rate, { holder, spent, held, release, cost: 0, need: 0, want: 0, holdSeconds });
    } catch {
      // Not known to the database: these spends and units are lost, never counted twice. The next trip says what is
      // held here, and the database counts the rest spent (or the lease expires, spent).
      h.lapsesAt = 0;
    }
  }

  function lapseLater(h: Held) {
    clearTimeout(h.timer);
    h.timer = undefined;
    if (h.units === 0 && h.spent.length === 0) return;
    h.timer = setTimeout(
      () => {
        h.timer = undefined;
        void inTurn(h, async () => (performance.now() >= h.lapsesAt ? trip(h, { release: true }) : lapseLater(h)));
      },
      Math.max(0, h.lapsesAt - performance.now()),
    );
    h.timer.unref();
  }

  /** Buckets with nothing here and no lease for a while are forgotten (their next lease starts at the cost again). */
  function sweep() {
    const now = performance.now();
    for (const [key, h] of holds)
      if (h.units === 0 && h.spent.length === 0 && h.queued === 0 && !h.timer && now >= h.lapsesAt + leaseMs) holds.delete(key);
  }

  async function chargeByTrip(h: Held, rate: Rate, cost: number): Promise<Taken> {
    if (chargeHere(h, cost)) return { ok: true }; // a trip before this one brought units
    const now = performance.now();
    const lapsed = now >= h.lapsesAt;
    const own = lapsed ? 0 : h.units;
    const most = leaseMs > 0 ? Math.floor(rate.capacity / 10) : 0;
    // grows while the user charges often: the lease ran dry before it lapsed; kept when it lapsed a moment ago
    if (!lapsed) h.size = Math.max(cost, Math.min(most, h.size * 2));
    else if (now >= h.lapsesAt + leaseMs) h.size = cost;
    const need = cost - own;
    const want = most >= cost ? Math.max(need, Math.min(most, h.size) - own) : need;
    const spent = h.spent;
    h.spent = [];
    const release = lapsed ? h.units : 0;
    h.units = 0; // in this trip: its own units pay the charge, or go back to the bucket
    h.rate = rate;
    const sent = performance.now();
    let result: Awaited<ReturnType<typeof tripToBucket>>;
    try {
      result = await tripToBucket(db, h.bucket, rate, { holder, spent, held: own + release, release, cost, need, want, holdSeconds });
    } catch (err) {
      h.lapsesAt = 0; // this trip's units and spends are lost: the lease expires in the database, spent
      throw err;
    }
    if (!result.allowed) {
      h.units = own;
      lapseLater(h);
      const perSecond = rate.capacity / rate.perSeconds;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((need - result.available) / perSecond)) };
    }
    h.units = result.taken - need;
    h.lapsesAt = sent + leaseMs;
    lapseLater(h);
    return { ok: true };
  }

  return {
    take(bucket, rate, cost) {
      const key = `${bucket.service}.${bucket.action}\u0000${bucket.user}`;
      let h = holds.get(key);
      if (!h) {
        if (holds.size >= MOST_BUCKETS_KEPT) sweep();
        h = { units: 0, lapsesAt: 0, spent: [], size: cost, turn: Promise.resolve(), queued: 0, timer: undefined, bucket, rate };
        holds.set(key, h);
      }
      if (h.queued === 0 && chargeHere(h, cost)) return Promise.resolve({ ok: true });
      const held = h;
      return inTurn(held, () => chargeByTrip(held, rate, cost));
    },
    async close() {
      await Promise.all(
        [...holds.values()].map((h) => {
          clearTimeout(h.timer);
          h.timer = undefined;
          h.lapsesAt = 0;
          return inTurn(h, () => trip(h, { release: true }));
        }),
      );
    },
  };
}
