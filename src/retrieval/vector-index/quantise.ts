// Unit vectors and their integer approximations. Scores are cosine similarities, so every vector is scaled to
// length 1 first; what the index stores and scores is exactly what `normaliseInto` produces (rounded to float32
// for rows), which is what an exact scan must compute too.

/**
 * Writes v / ‖v‖ into `out` (float64), with ‖v‖ the square root of the sum of squares taken in order. A zero vector
 * stays zero (it scores 0 against everything). `v` must have passed `checkVector`.
 */
export function normaliseInto(v: Float32Array | readonly number[], dim: number, out: Float64Array): void {
  let sum = 0;
  let max = 0;
  for (let i = 0; i < dim; i++) {
    const x = v[i]!;
    sum += x * x;
    max = Math.max(max, Math.abs(x));
  }
  if (max === 0) {
    out.fill(0, 0, dim);
    return;
  }
  if (sum > 1e-290 && sum < Infinity) {
    const length = Math.sqrt(sum);
    for (let i = 0; i < dim; i++) out[i] = v[i]! / length;
    return;
  }
  // squares that under- or overflow float64 (only possible for plain-number input): scale by the largest first
  let scaled = 0;
  for (let i = 0; i < dim; i++) scaled += (v[i]! / max) ** 2;
  const length = Math.sqrt(scaled);
  for (let i = 0; i < dim; i++) out[i] = v[i]! / max / length;
}

/** Throws unless `v` has `dim` finite components. */
export function checkVector(v: Float32Array | readonly number[], dim: number, what: string): void {
  if (v.length !== dim) throw new RangeError(`${what} has dimension ${v.length}, expected dimension ${dim}`);
  for (let i = 0; i < dim; i++) {
    if (!Number.isFinite(v[i])) throw new RangeError(`${what} has a component that is not a finite number at ${i}`);
  }
}

/** What quantising a vector x into integers q (x̂ = scale·q) leaves behind: both norms feed the error bound. */
export type Quantised = {
  /** x̂ = scale · q; a float32 value, so x̂ is the same whether computed here or from a stored scale. */
  scale: number;
  /** ‖x − x̂‖ */
  residual: number;
  /** ‖x̂‖ */
  norm: number;
};

/**
 * Rounds x to integers in [-levels, levels] into `target[0..dim)` (zeroing the rest) and measures the error. Any
 * rounding would keep the index exact, because the bound uses the residual actually left.
 */
export function quantise(x: ArrayLike<number>, dim: number, levels: number, target: Int8Array | Int16Array): Quantised {
  let max = 0;
  for (let i = 0; i < dim; i++) max = Math.max(max, Math.abs(x[i]!));
  const scale = Math.fround(max / levels);
  const inverse = scale > 0 ? 1 / scale : 0;
  let residual = 0;
  let norm = 0;
  for (let i = 0; i < dim; i++) {
    const q = Math.max(-levels, Math.min(levels, Math.round(x[i]! * inverse)));
    target[i] = q;
    const approx = q * scale;
    const left = x[i]! - approx;
    residual += left * left;
    norm += approx * approx;
  }
  target.fill(0, dim);
  return { scale, residual: Math.sqrt(residual), norm: Math.sqrt(norm) };
}

/** Row values are integers in [-127, 127]: -128 is never used, so every product and pair sum stays in range. */
export const ROW_LEVELS = 127;

/** Bytes before a row code's int8 values: the scale, ‖x − x̂‖ and ‖x̂‖, float32 little-endian, the norms rounded up. */
export const CODE_HEADER = 12;

/**
 * A row's code: what the index holds of the float32 unit vector `unit` (quantised as stored, so the bound holds
 * for the values exact scores read), in the form kept beside each chunk in the database. `out` holds
 * CODE_HEADER + dim bytes.
 */
export function encodeRow(unit: Float32Array, dim: number, out: Uint8Array): Uint8Array {
  const q = quantise(unit, dim, ROW_LEVELS, new Int8Array(out.buffer, out.byteOffset + CODE_HEADER, dim));
  const view = new DataView(out.buffer, out.byteOffset, CODE_HEADER);
  view.setFloat32(0, q.scale, true);
  view.setFloat32(4, roundUp32(q.residual), true);
  view.setFloat32(8, roundUp32(q.norm), true);
  return out;
}

/** The float32 unit vector v/‖v‖ of `v` (see normaliseInto): the values an exact score multiplies. */
export function unitRow(v: Float32Array | readonly number[], dim: number, scratch: Float64Array, out: Float32Array): Float32Array {
  normaliseInto(v, dim, scratch);
  for (let i = 0; i < dim; i++) out[i] = scratch[i]!;
  return out;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The smallest float32 ≥ v (v ≥ 0): stored bounds may only grow, never shrink, when rounded to float32. */
export function roundUp32(v: number): number {
  f32[0] = v;
  if (f32[0]! >= v) return f32[0]!;
  u32[0] = u32[0]! + 1;
  return f32[0]!;
}
