// A value as JSON text, never failing: a BigInt as its digits, a cycle or anything else JSON refuses said in a
// string. Plain JavaScript, so the tracing worker (tracing-worker.mjs) and the request's thread share it.

/** @param {unknown} value */
export function jsonText(value) {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    try {
      return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null';
    } catch (err) {
      return JSON.stringify(`not serialisable: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
