// Seeded random numbers and vectors for the vector-index tests: the same seed gives the same rows on every run.

/** A seeded generator of uniform numbers in [0, 1) (mulberry32). */
export function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** `n` vectors of `dim` normally distributed components (Box–Muller), not normalised. */
export function gaussians(n: number, seed: number, dim = 768): Float32Array[] {
  const next = mulberry32(seed);
  return Array.from({ length: n }, () =>
    Float32Array.from({ length: dim }, () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next())),
  );
}
