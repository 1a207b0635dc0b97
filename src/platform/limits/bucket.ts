import type { Sql } from '../db/index.ts';
import type { Rate } from './rates.ts';

export type Bucket = { user: string; service: string; action: string };

/** A spend charged from a lease and not yet told to the database: `at` is performance.now() when it was made. */
export type Spend = { at: number; units: number };

export type Trip = {
  holder: string;
  /** Spends since the holder's last trip, oldest first. */
  spent: readonly Spend[];
  /** Units the holder has (after its spends), given back or paying the charge. */
  held: number;
  /** Units of the holder's lease given back to the bucket (before the charge, if any). */
  release: number;
  /** The charge: `cost` units, of which the bucket must hold `need` (the rest is the holder's own), and up to `want` taken. */
  cost: number;
  need: number;
  want: number;
  /** Seconds the database counts the lease as held; past them its units are spent. */
  holdSeconds: number;
};

export type TripResult = { allowed: boolean; available: number; taken: number };

// limits/002_leases.sql: one call, one round trip, under the bucket row's lock; the refill is computed from the
// database's clock (now()), never a replica's. A spend's time goes as seconds before the call was sent.
const CHARGE = `SELECT allowed, available, taken FROM limit_charge($1, $2, $3, $4::float8, $5::float8, $6, $7::float8[], $8::float8[],
  $9::float8, $10::float8, $11::float8, $12::float8, $13::float8, $14::float8)`;

/** One trip to the bucket: what the holder spent, what it gives back, and the charge it could not make alone. */
export async function tripToBucket(sql: Sql, bucket: Bucket, rate: Rate, trip: Trip): Promise<TripResult> {
  const sent = performance.now();
  const array = (xs: number[]) => `{${xs.join(',')}}`;
  const params = [
    bucket.user,
    bucket.service,
    bucket.action,
    rate.capacity,
    rate.capacity / rate.perSeconds,
    trip.holder,
    array(trip.spent.map((s) => s.units)),
    array(trip.spent.map((s) => Math.max(0, (sent - s.at) / 1000))),
    trip.held,
    trip.release,
    trip.cost,
    trip.need,
    trip.want,
    trip.holdSeconds,
  ];
  const [row] = await sql.query<TripResult>(CHARGE, params);
  if (!row) throw new Error('limit_charge returned no row: the limits migrations have not been applied');
  return { allowed: row.allowed, available: Number(row.available), taken: Number(row.taken) };
}
