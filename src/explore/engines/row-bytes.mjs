// What a result row weighs on its way through the service (JSON text, cache, page): its values' lengths. Plain
// JavaScript because the embedded engine's worker counts with it too, before a large result leaves the worker.
export function rowBytes(row) {
  let bytes = 2;
  for (const v of row) {
    if (typeof v === 'string') bytes += v.length + 3;
    else if (v === null || v === undefined) bytes += 5;
    else if (typeof v === 'object') bytes += JSON.stringify(v).length + 1;
    else bytes += String(v).length + 1;
  }
  return bytes;
}
