import { conflict, notFound } from '../platform/errors.ts';

// Where a long upload is: the client names its upload (`upload_id`) when it sends it and polls
// GET /collections/{slug}/uploads/{upload_id} while the POST runs. Polling, not Server-Sent Events: the browser
// reports the bytes it sends only through XMLHttpRequest, whose POST cannot also be an event stream, so a stream would
// be a second request either way; a poll every half second is one small JSON read, passes every proxy (none buffers
// it), and needs no connection held per upload.
//
// The state lives in this process only: a replica knows the uploads it is receiving. Behind several replicas a poll
// can reach one that does not, and answers 404; the console then keeps showing the bytes sent until the POST
// answers. An upload is forgotten KEEP_MS after it finished (its POST has answered by then), and at most MAX_TRACKED
// are held (the oldest finished go first; past that, new uploads are received untracked).

export type UploadStage = 'receiving' | 'extracting' | 'embedding' | 'writing' | 'done' | 'failed';

export type UploadStatus = {
  upload_id: string;
  collection: string;
  filename: string | null;
  stage: UploadStage;
  /** What a person reads: "extracting page 3 of 120", "embedding 64 of 300 chunks". */
  message: string;
  bytes_received: number;
  /** The request's declared length (multipart framing included); null when it sent none. */
  bytes_total: number | null;
  pages_done: number | null;
  pages_total: number | null;
  chunks_done: number | null;
  chunks_total: number | null;
  document_id: string | null;
  /** Why it failed: the problem's detail. */
  error: string | null;
  updated_at: string;
};

/** What ingestion tells as it goes; every method is safe to call on an untracked upload. */
export type UploadReporter = {
  received(bytes: number, filename: string): void;
  extracting(pagesDone: number, pagesTotal: number | null): void;
  embedding(chunksDone: number, chunksTotal: number): void;
  writing(): void;
  done(documentId: string): void;
  failed(detail: string): void;
};

export const KEEP_MS = 60_000;
export const MAX_TRACKED = 1000;

type Entry = { user: string; status: UploadStatus; finishedAt: number | null };

export type UploadProgress = ReturnType<typeof createUploadProgress>;

export function createUploadProgress(opts: { keepMs?: number; maxTracked?: number; now?: () => number } = {}) {
  const keepMs = opts.keepMs ?? KEEP_MS;
  const maxTracked = opts.maxTracked ?? MAX_TRACKED;
  const now = opts.now ?? Date.now;
  const entries = new Map<string, Entry>();

  function forgetOld() {
    const t = now();
    for (const [id, e] of entries) if (e.finishedAt !== null && t - e.finishedAt > keepMs) entries.delete(id);
    // insertion order: the oldest finished go first
    for (const [id, e] of entries) {
      if (entries.size < maxTracked) break;
      if (e.finishedAt !== null) entries.delete(id);
    }
  }

  return {
    /**
     * Starts tracking an upload for its uploader. 409 when that id names an upload still running; an id of a
     * finished one is taken over.
     */
    start(uploadId: string, user: string, collection: string, bytesTotal: number | null): UploadReporter {
      forgetOld();
      const held = entries.get(uploadId);
      if (held && held.finishedAt === null)
        throw conflict(`Upload '${uploadId}' is still running: give each upload its own upload_id (a fresh UUID).`);
      if (entries.size >= maxTracked) return untracked;
      const status: UploadStatus = {
        upload_id: uploadId,
        collection,
        filename: null,
        stage: 'receiving',
        message: 'receiving',
        bytes_received: 0,
        bytes_total: bytesTotal,
        pages_done: null,
        pages_total: null,
        chunks_done: null,
        chunks_total: null,
        document_id: null,
        error: null,
        updated_at: new Date(now()).toISOString(),
      };
      const entry: Entry = { user, status, finishedAt: null };
      entries.delete(uploadId);
      entries.set(uploadId, entry);
      const set = (change: Partial<UploadStatus>) => {
        if (entry.finishedAt !== null) return;
        Object.assign(status, change, { updated_at: new Date(now()).toISOString() });
        if (status.stage === 'done' || status.stage === 'failed') entry.finishedAt = now();
      };
      return {
        received: (bytes, filename) =>
          set({
            filename,
            bytes_received: bytes,
            message: status.bytes_total ? `receiving ${Math.min(100, Math.round((100 * bytes) / status.bytes_total))}%` : 'receiving',
          }),
        extracting: (done, total) =>
          set({
            stage: 'extracting',
            pages_done: done,
            pages_total: total,
            message: total ? `extracting page ${Math.max(1, Math.min(done, total))} of ${total}` : 'extracting text',
          }),
        embedding: (done, total) =>
          set({ stage: 'embedding', chunks_done: done, chunks_total: total, message: `embedding ${done} of ${total} chunks` }),
        writing: () => set({ stage: 'writing', message: 'writing' }),
        done: (documentId) => set({ stage: 'done', document_id: documentId, message: 'done' }),
        failed: (detail) => set({ stage: 'failed', error: detail, message: `failed: ${detail}` }),
      };
    },
    /** The upload, for its uploader only: anyone else (or another collection's path) is told there is none. */
    read(uploadId: string, user: string, collection: string): UploadStatus {
      forgetOld();
      const entry = entries.get(uploadId);
      if (!entry || entry.user !== user || entry.status.collection !== collection)
        throw notFound(
          `No upload '${uploadId}' of yours to collection '${collection}' is running or finished in the last ${keepMs / 1000} s on this replica.`,
        );
      return { ...entry.status };
    },
  };
}

const untracked: UploadReporter = {
  received() {},
  extracting() {},
  embedding() {},
  writing() {},
  done() {},
  failed() {},
};

export { untracked as untrackedUpload };
