// How an embedding travels between the service and pgvector: written as text for an insert (float32Text), read back
// in pgvector's binary form (vectorFromBinary). Both keep the exact float32 values the row codes were computed from.
// Query vectors, which are not stored, go as toVector() text (src/platform/db).

/**
 * A float32 vector's text, each value as 9 significant digits (FLT_DECIMAL_DIG: it reads back as the very same
 * float32), written as an integer and a power of ten ("-123456789e-11"), byte by byte into one reused buffer: the
 * text of a document's embeddings was the largest cost of writing its chunks (toPrecision, then number-to-string
 * conversions and string concatenation).
 */
export function float32Text(v: Float32Array): string {
  const size = 2 + MAX_VALUE_BYTES * v.length;
  if (textBytes.length < size) textBytes = Buffer.allocUnsafe(size);
  const out = textBytes;
  const bits = new Uint32Array(v.buffer, v.byteOffset, v.length);
  let at = 0;
  out[at++] = 0x5b; // [
  for (let i = 0; i < v.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    const x = v[i]!;
    if (x === 0) out[at++] = 0x30;
    else at = writeNineDigits(out, at, x, (bits[i]! >>> 23) & 0xff);
  }
  out[at++] = 0x5d; // ]
  return out.toString('latin1', 0, at);
}

/** A value's most bytes: a sign, nine digits, 'e', the exponent's sign and two digits, a comma. */
const MAX_VALUE_BYTES = 15;
let textBytes = Buffer.allocUnsafe(0);
const LOG10_2 = Math.log10(2);
const POWERS_OF_TEN = Array.from({ length: 100 }, (_, i) => 10 ** (i - 60)); // 1e-60 .. 1e39, past float32's range

/**
 * Writes x as m·10^e with m a 9-digit integer. The float64 division is off by far less than the half unit in the
 * ninth digit that separates x from the neighbouring float32 values' midpoints, so the text reads back as x exactly.
 * The decimal exponent starts from the binary one (2^k ≤ |x|, so it is never too high) and is raised when m has ten
 * digits; a subnormal (no binary exponent) takes its logarithm.
 */
function writeNineDigits(out: Buffer, at: number, x: number, exponentBits: number): number {
  const a = Math.abs(x);
  let e = (exponentBits === 0 ? Math.floor(Math.log10(a)) : Math.floor((exponentBits - 127) * LOG10_2)) - 8;
  let m = Math.round(a / POWERS_OF_TEN[e + 60]!);
  while (m >= 1e9) m = Math.round(a / POWERS_OF_TEN[++e + 60]!);
  // log10 can land one too high just below a power of ten
  if (m < 1e8) m = Math.round(a / POWERS_OF_TEN[--e + 60]!);
  if (x < 0) out[at++] = 0x2d; // -
  for (let d = 8; d >= 0; d--) {
    out[at + d] = 0x30 + (m % 10);
    m = (m / 10) | 0; // m < 10^9 < 2^31
  }
  at += 9;
  out[at++] = 0x65; // e
  if (e < 0) {
    out[at++] = 0x2d;
    e = -e;
  }
  if (e >= 10) out[at++] = 0x30 + Math.floor(e / 10);
  out[at++] = 0x30 + (e % 10);
  return at;
}

/** pgvector's binary form (vector_send): int16 dimension, int16 unused, then the values as big-endian float4. */
export function vectorFromBinary(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dim = view.getInt16(0);
  if (bytes.byteLength !== 4 + 4 * dim) throw new Error(`a vector of ${bytes.byteLength} bytes cannot hold ${dim} dimensions`);
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = view.getFloat32(4 + 4 * i);
  return v;
}
