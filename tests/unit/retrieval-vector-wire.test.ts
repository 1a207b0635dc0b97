import { afterAll, describe, expect, it } from 'vitest';
import { copyInput, int4Field, openPglite } from '../../src/platform/db/index.ts';
import { vectorField, vectorFromBinary } from '../../src/retrieval/vector-wire.ts';
import { mulberry32 } from '../support/random-vectors.ts';

// A chunk's embedding travels to the database in pgvector's binary form; it must be stored as the very float32
// values its row code was computed from, or exact scores from the copy and from the database would disagree.

const random = mulberry32(7);
const bits = new Uint32Array(1);
const asFloat = new Float32Array(bits.buffer);
/** Float32 values from random bit patterns (every exponent, subnormals included), and the edges. */
function samples(n: number): Float32Array {
  const out: number[] = [1, -1, 0.1, 0, -0, 1e-10, 1e10, 3.4028234663852886e38, 1.401298464324817e-45, 1.1754943508222875e-38, 9.99999e-5];
  while (out.length < n) {
    bits[0] = Math.floor(random() * 2 ** 32);
    if (Number.isFinite(asFloat[0]!)) out.push(asFloat[0]!);
  }
  return Float32Array.from(out);
}

const db = await openPglite();
await db.exec('CREATE EXTENSION IF NOT EXISTS vector; CREATE TABLE embeddings (n int, v vector)');
afterAll(() => db.close());

describe("an embedding's binary form", () => {
  it('reads back as the same float32 values in JavaScript, at every dimension pgvector stores', () => {
    for (let round = 0; round < 12; round++) {
      const values = samples(16_000);
      expect(vectorFromBinary(vectorField(values))).toEqual(values);
    }
    expect(vectorFromBinary(vectorField(new Float32Array(0)))).toEqual(new Float32Array(0));
  });

  it('is stored by pgvector as the same float32 values, and read back by its text as well', async () => {
    const values = samples(16_000);
    await db.copyIn('embeddings (n, v)', copyInput([[int4Field(1), vectorField(values)]]));
    const [row] = await db.query<{ binary: Uint8Array; text: string }>(
      'SELECT vector_send(v) AS binary, v::text AS text FROM embeddings WHERE n = 1',
    );
    expect(vectorFromBinary(row!.binary)).toEqual(values);
    expect(Float32Array.from(JSON.parse(row!.text) as number[])).toEqual(values);
  });

  it('is refused by pgvector when a value is not finite', async () => {
    for (const bad of [NaN, Infinity])
      await expect(db.copyIn('embeddings (n, v)', copyInput([[int4Field(2), vectorField(Float32Array.of(0.5, bad))]]))).rejects.toThrow(
        /not allowed in vector/,
      );
  });
});
