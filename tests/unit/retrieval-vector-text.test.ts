import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { float32Text, vectorFromBinary } from '../../src/retrieval/vector-wire.ts';
import { mulberry32 } from '../support/random-vectors.ts';

// A chunk's embedding travels to the database as text; it must read back as the very float32 values its row code
// was computed from, or exact scores from the copy and from the database would disagree.

const random = mulberry32(7);
const bits = new Uint32Array(1);
const asFloat = new Float32Array(bits.buffer);
/** Float32 values from random bit patterns (every exponent, subnormals included), and the edges. */
function samples(n: number): Float32Array {
  const out: number[] = [1, -1, 0.1, 1e-10, 1e10, 3.4028234663852886e38, 1.401298464324817e-45, 1.1754943508222875e-38, 9.99999e-5];
  while (out.length < n) {
    bits[0] = Math.floor(random() * 2 ** 32);
    if (Number.isFinite(asFloat[0]!)) out.push(asFloat[0]!);
  }
  return Float32Array.from(out);
}

const db = await openPglite();
await db.query('CREATE EXTENSION IF NOT EXISTS vector');
afterAll(() => db.close());

describe("an embedding's text", () => {
  it('reads back as the same float32 values in JavaScript', () => {
    const values = samples(200_000);
    const parsed = Float32Array.from(float32Text(values).slice(1, -1).split(','), Number);
    expect(parsed).toEqual(values);
  });

  it("reads back as the same float32 values in pgvector's own parser", async () => {
    const values = samples(16_000);
    const [row] = await db.query<{ v: Uint8Array }>('SELECT vector_send($1::vector) AS v', [float32Text(values)]);
    expect(vectorFromBinary(row!.v)).toEqual(values);
  });

  it('writes zero as 0 and keeps the sign of a negative value', () => {
    expect(float32Text(Float32Array.of(0, -0.5, 0.25))).toBe('[0,-500000000e-9,250000000e-9]');
  });
});
