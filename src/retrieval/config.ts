import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { ConfigError, flag, int, list, loadConfig, num, optionalStr, str, url, type Env } from '../platform/config.ts';
import { parseWatchRoots } from './watch/roots.ts';

// Retrieval settings, with the specification's defaults.
export const retrievalShape = {
  MAX_UPLOAD_BYTES: int(52_428_800, 1),
  MAX_JSON_BYTES: int(1_048_576, 1024),
  DEFAULT_TOP_K: int(5, 1),
  MAX_TOP_K: int(50, 1),
  CHUNK_SIZE_TOKENS: int(400, 1),
  CHUNK_OVERLAP_TOKENS: int(60, 0),
  /** Characters in one chunk; unset: CHARS_PER_WINDOW_WORD per word of the window (4800 for 400 words). */
  CHUNK_MAX_CHARS: optionalStr(),
  EMBED_URL: url(),
  EMBED_API_KEY: optionalStr(),
  EMBED_MODEL: str('svc-embed'),
  EMBED_DIM: int(768, 1),
  EMBED_BATCH_SIZE: int(64, 1),
  /** The chat model that answers (`POST /collections/{slug}/answer`); unset: the offline extractive answer. */
  CHAT_URL: url(),
  CHAT_API_KEY: optionalStr(),
  CHAT_MODEL: str('svc-chat'),
  CHAT_TIMEOUT_MS: int(60_000, 1),
  /** A chunk is context for an answer when its cosine similarity reaches this, or it shares a term with the question. */
  ANSWER_MIN_SCORE: num(0.5, -1, 1),
  /** How long an answer session's turns are remembered. */
  ANSWER_SESSION_TTL: int(3600, 1),
  RAG_OCR_ENABLED: flag(false),
  /**
   * Worker threads that read PDF text, a long document split across them; 0 reads on the thread that answers
   * requests. Default: the cores the process may use, at most 4 (each holds its own pdf.js, about 40 MiB).
   */
  RAG_PDF_WORKERS: int(Math.min(4, availableParallelism()), 0),
  /**
   * Seconds the OCR engine (its thread holds 55 MB of wasm memory and 14 MB of heap after a page) and each PDF
   * worker wait for more work before they stop; the next page starts them again (about a second for OCR).
   */
  RAG_EXTRACT_IDLE_SECONDS: int(30, 1),
  /** Bytes an Office package may inflate to before it is refused as a zip bomb. */
  RAG_MAX_EXTRACTED_BYTES: int(268_435_456, 1),
  /**
   * Above this many chunks a collection is ranked by pgvector directly instead of the in-memory copy, which holds
   * about 800 bytes a chunk at 768 dimensions (int8 rows and their bounds; the float rows stay in the database).
   */
  RAG_MEMORY_INDEX_MAX_CHUNKS: int(1_000_000, 0),
  /**
   * Bytes of float rows (about 3 KiB a chunk at 768 dimensions) the process keeps, across collections, after
   * hybrid's exact re-rank has read them, so repeated questions re-rank without reading them again; 0: none kept.
   */
  RAG_FLOAT_CACHE_BYTES: int(67_108_864, 0),
  /**
   * A copy of this many chunks or more is grouped into clusters with a proven bound once it loads, so dense questions
   * skip clusters that cannot hold a better answer (vector-index/clusters.ts); 0 builds none. The build runs on a
   * worker thread (2 to 3 s at 100 000 chunks, 13 s at a million) while questions scan every row, same answers.
   */
  RAG_PRUNING_FROM_CHUNKS: int(20_000, 0),
  /** Above this many chunks a collection cannot be ranked by keyword (hybrid and keyword modes answer 422). */
  RAG_KEYWORD_INDEX_MAX_CHUNKS: int(1_000_000, 0),
  /** Candidates each ranking offers to hybrid's fusion (at least top_k). */
  HYBRID_CANDIDATES: int(50, 1),
  /**
   * Where a new collection keeps its chunks when POST /collections names no `backend`: `memory` (Postgres, ranked in
   * memory), `lake` (an Iceberg table on Trino, which then needs TRINO_URL and TRINO_SERVICE_TOKEN) or `search` (an
   * OpenSearch index, which then needs OPENSEARCH_URL).
   */
  RAG_DEFAULT_BACKEND: z.enum(['memory', 'lake', 'search']).default('memory'),
  /** OpenSearch for search-backend collections; unset: a collection cannot be created on it. */
  OPENSEARCH_URL: url(),
  OPENSEARCH_USER: optionalStr(),
  OPENSEARCH_PASSWORD: optionalStr(),
  /** The CA that signed OpenSearch's certificate (PEM), when it is not one the system trusts. */
  OPENSEARCH_CA_FILE: optionalStr(),
  /** Prefix of the collections' index names (the svc user's rights in OpenSearch are usually given by prefix). */
  RAG_SEARCH_INDEX_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9_-]*$/, 'expected lowercase letters, digits, - and _')
    .default('svc-chunks'),
  /** Replicas of each collection's index (0 on a single-node cluster). */
  RAG_SEARCH_REPLICAS: int(1, 0),
  /** `auto`: dense ranking by OpenSearch's k-NN (not exact) where the plugin is installed; `off`: svc's exact copy. */
  RAG_SEARCH_KNN: z.enum(['auto', 'off']).default('auto'),
  /**
   * Candidates Lucene's HNSW visits for a k-NN question (ef_search): recall against the time a question takes. At
   * 50 000 random 768-dimension vectors, 100 gave recall@10 0.65 and 400 gave 0.92; clustered vectors 1.00 at both.
   */
  RAG_SEARCH_EF_SEARCH: int(400, 1),
  /** Time limit of one OpenSearch request. */
  RAG_SEARCH_TIMEOUT_MS: int(30_000, 1),
  /** Chunks one bulk request carries. */
  RAG_SEARCH_BULK_CHUNKS: int(500, 1),
  /** Trino for lake collections; unset: a collection cannot be created on the lake (503 naming this setting). */
  TRINO_URL: url(),
  TRINO_CA_FILE: optionalStr(),
  /** The user that creates, writes and drops the lake's tables (and reads chunk texts for keyword ranking). */
  TRINO_SERVICE_USER: str('svc-service'),
  TRINO_SERVICE_TOKEN: optionalStr(),
  /** `catalog.schema` of the lake collections' tables (one table a collection). */
  RAG_LAKE_SCHEMA: z
    .string()
    .regex(/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/, 'expected catalog.schema in lowercase letters, digits and _')
    .default('iceberg.retrieval'),
  /** Time limit of one lake statement (Trino's writes to Iceberg take seconds). */
  RAG_LAKE_TIMEOUT_MS: int(120_000, 1),
  /** Chunks one INSERT writes: a document of more chunks is written in several (each a snapshot of its own). */
  RAG_LAKE_INSERT_CHUNKS: int(500, 1),
  /**
   * The S3 endpoint of the lake's bucket (the Iceberg warehouse Trino writes), where an import writes its Parquet
   * files before Trino registers them; credentials as for the originals (OBJSTORE_* or AWS_*). Unset: AWS S3.
   */
  RAG_LAKE_S3_ENDPOINT_URL: url(),
  /** Rows of an import's source one part holds at most (an import of N rows has N / this parts, a power of two). */
  RAG_IMPORT_PART_ROWS: int(50_000, 1),
  /** Rows of one Parquet file an import writes and registers (one Iceberg snapshot each). */
  RAG_IMPORT_FILE_ROWS: int(10_000, 1),
  /** Embedding requests one import worker has in flight at once. */
  RAG_IMPORT_CONCURRENCY: int(4, 1),
  /** A part whose worker has not renewed its claim for this long is taken by another (a killed worker's part). */
  RAG_IMPORT_CLAIM_TIMEOUT_MS: int(60_000, 1000),
  /** The tags of tables and columns explore reads too: an import refuses to embed a `pii` column (imports/personal.ts). */
  CATALOG_TAGS_FILE: optionalStr(),
  /** Roles that read personal data unmasked, as explore's redaction decides (an import of such a column is theirs). */
  PII_BYPASS_ROLES: list(['svc-admin', 'svc-engineer']),
  /** Import workers a `POST …/imports` starts in the service (the CLI's --workers for `svc embed`). */
  RAG_IMPORT_WORKERS: int(2, 1),
  UPLOAD_TMP_DIR: optionalStr(),
  /**
   * An uploaded file of at most this many bytes is received into memory and extracted from there; a larger one is
   * written to a temporary file in UPLOAD_TMP_DIR as it arrives. 0: every upload goes to a file.
   */
  UPLOAD_MEMORY_BYTES: int(1_048_576, 0),
  /** Where uploaded files are kept (a folder or s3://bucket/prefix); unset: `originals` in the data folder. */
  ORIGINALS_STORE: optionalStr(),
  /** Days an uploaded file is kept after its upload; 0 keeps it as long as its document. */
  ORIGINALS_RETENTION_DAYS: int(0, 0),
  /** Folders and s3://bucket/prefix entries collections may watch; empty: watching is off. */
  WATCH_ROOTS: list([]),
  /** How often a replica looks for watches that are due. */
  WATCH_POLL_SECONDS: int(5, 1),
  /** How long a replica holds a watch it scans without renewing (renewed every third of it while scanning). */
  WATCH_LEASE_SECONDS: int(120, 3),
  /** Files of one scan read, extracted and stored at the same time. */
  WATCH_CONCURRENCY: int(2, 1),
  WATCH_S3_ENDPOINT_URL: url(),
  OBJSTORE_ACCESS_KEY_ID: optionalStr(),
  OBJSTORE_SECRET_ACCESS_KEY: optionalStr(),
  AWS_ACCESS_KEY_ID: optionalStr(),
  AWS_SECRET_ACCESS_KEY: optionalStr(),
  AWS_DEFAULT_REGION: optionalStr(),
};

/**
 * Prose runs 5 to 7 characters a word with its space, so a window of words never reaches 12 a word; text without
 * spaces (a hash, base64, a minified file) does, and is cut to chunks an embedding model can read.
 */
export const CHARS_PER_WINDOW_WORD = 12;

export type RetrievalConfig = ReturnType<typeof loadRetrievalConfig>;

export function loadRetrievalConfig(env: Env) {
  const { CHUNK_MAX_CHARS, ...cfg } = loadConfig(retrievalShape, env);
  const maxChars = CHUNK_MAX_CHARS === undefined ? cfg.CHUNK_SIZE_TOKENS * CHARS_PER_WINDOW_WORD : Number(CHUNK_MAX_CHARS);
  if (!Number.isInteger(maxChars) || maxChars < 16) {
    throw new ConfigError(`invalid configuration: SVC_CHUNK_MAX_CHARS=${JSON.stringify(CHUNK_MAX_CHARS)}: expected an integer >= 16`);
  }
  if (cfg.CHUNK_OVERLAP_TOKENS >= cfg.CHUNK_SIZE_TOKENS) {
    throw new Error('SVC_CHUNK_OVERLAP_TOKENS must be smaller than SVC_CHUNK_SIZE_TOKENS');
  }
  if (cfg.DEFAULT_TOP_K > cfg.MAX_TOP_K) throw new Error('SVC_DEFAULT_TOP_K must not exceed SVC_MAX_TOP_K');
  const {
    WATCH_ROOTS,
    WATCH_S3_ENDPOINT_URL,
    OBJSTORE_ACCESS_KEY_ID,
    OBJSTORE_SECRET_ACCESS_KEY,
    AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY,
    AWS_DEFAULT_REGION,
    ...rest
  } = cfg;
  let roots;
  try {
    roots = parseWatchRoots(WATCH_ROOTS);
  } catch (err) {
    throw new ConfigError(`invalid configuration: SVC_WATCH_ROOTS: ${(err as Error).message}`);
  }
  // the same credential names as the tracker's store: OBJSTORE_* first, else the AWS ones
  const [accessKeyId, secretAccessKey] = OBJSTORE_ACCESS_KEY_ID
    ? [OBJSTORE_ACCESS_KEY_ID, OBJSTORE_SECRET_ACCESS_KEY]
    : [AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY];
  const watch = {
    roots,
    s3: {
      ...(WATCH_S3_ENDPOINT_URL ? { endpoint: WATCH_S3_ENDPOINT_URL } : {}),
      ...(AWS_DEFAULT_REGION ? { region: AWS_DEFAULT_REGION } : {}),
      ...(accessKeyId ? { accessKeyId, secretAccessKey: secretAccessKey ?? '' } : {}),
    },
    leaseSeconds: rest.WATCH_LEASE_SECONDS,
    concurrency: rest.WATCH_CONCURRENCY,
  };
  return { ...rest, CHUNK_MAX_CHARS: maxChars, watch };
}
