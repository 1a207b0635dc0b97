import { flag, int, loadConfig, optionalStr, str, url, type Env } from '../platform/config.ts';

// Retrieval settings, with the specification's defaults.
export const retrievalShape = {
  MAX_UPLOAD_BYTES: int(52_428_800, 1),
  MAX_JSON_BYTES: int(1_048_576, 1024),
  DEFAULT_TOP_K: int(5, 1),
  MAX_TOP_K: int(50, 1),
  CHUNK_SIZE_TOKENS: int(400, 1),
  CHUNK_OVERLAP_TOKENS: int(60, 0),
  EMBED_URL: url(),
  EMBED_API_KEY: optionalStr(),
  EMBED_MODEL: str('svc-embed'),
  EMBED_DIM: int(768, 1),
  EMBED_BATCH_SIZE: int(64, 1),
  RAG_OCR_ENABLED: flag(false),
  /** Bytes an Office package may inflate to before it is refused as a zip bomb. */
  RAG_MAX_EXTRACTED_BYTES: int(268_435_456, 1),
  /** Above this many chunks a collection is ranked by pgvector directly instead of the in-memory index. */
  RAG_MEMORY_INDEX_MAX_CHUNKS: int(200_000, 0),
  UPLOAD_TMP_DIR: optionalStr(),
};

export type RetrievalConfig = ReturnType<typeof loadRetrievalConfig>;

export function loadRetrievalConfig(env: Env) {
  const cfg = loadConfig(retrievalShape, env);
  if (cfg.CHUNK_OVERLAP_TOKENS >= cfg.CHUNK_SIZE_TOKENS) {
    throw new Error('SVC_CHUNK_OVERLAP_TOKENS must be smaller than SVC_CHUNK_SIZE_TOKENS');
  }
  if (cfg.DEFAULT_TOP_K > cfg.MAX_TOP_K) throw new Error('SVC_DEFAULT_TOP_K must not exceed SVC_MAX_TOP_K');
  return cfg;
}
