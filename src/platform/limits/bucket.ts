import type { Sql } from '../db/index.ts';
import type { Rate } from './rates.ts';

export type Taken = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number; available: number };

type Bucket = { user: string; service: string; action: string };

// One statement, so replicas charging the same bucket queue on its row and each sees what the other left. The
// refill is computed from the database's clock (now()), never a replica's.
const REFILLED = `LEAST($4::float8, b.tokens + GREATEST(0, extract(epoch FROM now() - b.updated_at)::float8) * $5::float8)`;
const TAKE = `
INSERT INTO limit_buckets AS b (user_id, service, action, tokens, updated_at)
VALUES ($1, $2, $3, $4::float8 - $6::float8, now())
ON CONFLICT (user_id, service, action) DO UPDATE SET tokens = ${REFILLED} - $6::float8, updated_at = now()
  WHERE ${REFILLED} >= $6::float8
RETURNING tokens`;
const AVAILABLE = `SELECT ${REFILLED} AS available FROM limit_buckets b WHERE user_id = $1 AND service = $2 AND action = $3`;

/** Takes `cost` tokens when the bucket holds them (cost must not exceed the capacity); else says when it will. */
export async function takeTokens(sql: Sql, bucket: Bucket, rate: Rate, cost: number): Promise<Taken> {
  const perSecond = rate.capacity / rate.perSeconds;
  const params = [bucket.user, bucket.service, bucket.action, rate.capacity, perSecond, cost];
  const [taken] = await sql.query<{ tokens: number }>(TAKE, params);
  if (taken) return { ok: true, remaining: taken.tokens };
  const [row] = await sql.query<{ available: number }>(AVAILABLE, params.slice(0, 5));
  const available = row?.available ?? 0;
  return { ok: false, available, retryAfterSeconds: Math.max(1, Math.ceil((cost - available) / perSecond)) };
}
