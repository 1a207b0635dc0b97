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

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The smallest float32 ≥ v (v ≥ 0): stored bounds may only grow, never shrink, when rounded to float32. */
export function roundUp32(v: number): number {
  f32[0] = v;
  if (f32[0]! >= v) return f32[0]!;
  u32[0] = u32[0]! + 1;
  return f32[0]!;
}
