// How an embedding travels between the service and pgvector: in pgvector's binary form both ways, written with a
// chunk's COPY (vectorField) and read back by the in-memory copy's (vectorFromBinary), so the stored values are the
// exact float32 values the row codes were computed from. Query vectors, which are not stored, go as toVector() text
// (src/platform/db).

/** The vector's binary form for a COPY field (vector_recv): int16 dimension, int16 unused, big-endian float4s. */
export function vectorField(v: Float32Array): Uint8Array {
  const bytes = new Uint8Array(4 + 4 * v.length);
  const view = new DataView(bytes.buffer);
  view.setInt16(0, v.length);
  for (let i = 0; i < v.length; i++) view.setFloat32(4 + 4 * i, v[i]!);
  return bytes;
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
