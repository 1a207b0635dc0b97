// @ts-check
// Uploads to the open collection, a few files at a time, each with its own row: a bar of the bytes sent (what
// XMLHttpRequest reports; fetch cannot), then of the service's stage, read by polling the upload's progress
// (GET /collections/{slug}/uploads/{upload_id}) while the POST runs: extracting page n of m, embedding k of n chunks,
// writing, done. One bar above sums the bytes of them all. A poll answered 404 (another replica received the file)
// leaves the row at "processing" until the POST answers.
import { byId, h } from './dom.js';

/** @typedef {import('./types.ts').UploadStatus} UploadStatus */

/** Files sent at once: the service stores one while it reads another (many PDFs go in about a third faster). */
const UPLOADS_IN_FLIGHT = 3;
/** How often a running upload's stage is read. */
const POLL_MS = 400;

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err));

/**
 * One file's row in #uploads.
 * @param {File} file
 */
function fileRow(file) {
  const bar = h('progress', { max: 100, value: 0, 'aria-label': `Upload of ${file.name}` });
  const stage = h('span', { class: 'stage', 'aria-live': 'polite' }, 'waiting');
  const row = h('li', { dataset: { file: file.name } }, h('span', { class: 'name' }, file.name), bar, stage);
  return {
    row,
    /**
     * @param {string} text
     * @param {number} [fraction] 0 to 1; absent leaves the bar as it is
     */
    show(text, fraction) {
      stage.textContent = text;
      if (fraction !== undefined) bar.value = Math.round(100 * Math.min(1, Math.max(0, fraction)));
    },
  };
}

/**
 * The service's stage as a fraction of that stage's work.
 * @param {UploadStatus} s
 */
const stageFraction = (s) =>
  s.stage === 'extracting' && s.pages_total
    ? (s.pages_done ?? 0) / s.pages_total
    : s.stage === 'embedding' && s.chunks_total
      ? (s.chunks_done ?? 0) / s.chunks_total
      : s.stage === 'writing' || s.stage === 'done'
        ? 1
        : undefined;

/**
 * One file to the collection, named with a fresh upload_id so its stage can be read while it runs.
 * @param {string} slug
 * @param {File} file
 * @param {() => Record<string, string>} headers
 * @param {{ sent(loaded: number): void, show(text: string, fraction?: number): void }} report
 * @returns {Promise<{ document_id: string, filename: string, duplicate?: boolean }>}
 */
function upload(slug, file, headers, report) {
  const uploadId = crypto.randomUUID();
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let finished = false;
  const poll = async () => {
    try {
      const res = await fetch(`/collections/${slug}/uploads/${uploadId}`, { headers: headers() });
      if (finished) return;
      if (res.ok) {
        const status = /** @type {UploadStatus} */ (await res.json());
        if (!finished && status.stage !== 'done' && status.stage !== 'failed') report.show(status.message, stageFraction(status));
      } else report.show('processing');
    } catch {
      // the POST's own answer says what happened
    }
    if (!finished) timer = setTimeout(poll, POLL_MS);
  };
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/collections/${slug}/documents?upload_id=${uploadId}`);
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener('progress', (e) => {
      if (!e.lengthComputable) return;
      report.sent((file.size * e.loaded) / e.total);
      report.show(`sending ${Math.round((100 * e.loaded) / e.total)}%`, e.loaded / e.total);
    });
    // every byte is sent: from now on the service's stage is what there is to show
    xhr.upload.addEventListener('load', () => {
      report.show('processing', 0);
      if (!finished) timer = setTimeout(poll, POLL_MS);
    });
    const end = () => {
      finished = true;
      clearTimeout(timer);
    };
    xhr.addEventListener('load', () => {
      end();
      const data = JSON.parse(xhr.responseText || '{}');
      if (xhr.status < 300) resolve(data);
      else reject(new Error(`${file.name}: ${data.detail || xhr.status}`));
    });
    xhr.addEventListener('error', () => {
      end();
      reject(new Error(`${file.name}: network error`));
    });
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}

/**
 * Every file to the collection, a few at a time; what the service said of each file (a refusal, a duplicate) is
 * listed in #upload-error in the order the files were given, and each file's row ends at done or failed.
 * @param {File[]} files
 * @param {{ slug: string, headers: () => Record<string, string>, uploaded: () => Promise<void> }} deps
 */
export async function uploadAll(files, deps) {
  const progress = byId('progress', HTMLProgressElement);
  const uploadError = byId('upload-error');
  const rows = files.map(fileRow);
  byId('uploads').replaceChildren(...rows.map((r) => r.row));
  const total = files.reduce((bytes, f) => bytes + f.size, 0) || 1;
  /** @type {number[]} */
  const sent = files.map(() => 0);
  /** @type {string[]} */
  const said = files.map(() => '');
  const showProgress = () => {
    progress.value = (100 * sent.reduce((a, b) => a + b, 0)) / total;
  };
  showProgress();
  uploadError.textContent = '';
  progress.hidden = false;
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < files.length; i = next++) {
      const file = /** @type {File} */ (files[i]);
      const row = /** @type {ReturnType<typeof fileRow>} */ (rows[i]);
      try {
        const report = {
          sent: (/** @type {number} */ loaded) => {
            sent[i] = loaded;
            showProgress();
          },
          show: row.show,
        };
        const doc = await upload(deps.slug, file, deps.headers, report);
        if (doc.duplicate) {
          said[i] = `${file.name}: already in this collection as ${doc.filename}; nothing was added.\n`;
          row.show('already in this collection', 1);
        } else row.show('done', 1);
      } catch (err) {
        said[i] = message(err) + '\n';
        row.show('failed');
      }
      sent[i] = file.size;
      showProgress();
      uploadError.textContent = said.join('');
    }
  };
  await Promise.all(Array.from({ length: Math.min(UPLOADS_IN_FLIGHT, files.length) }, lane));
  progress.hidden = true;
  await deps.uploaded();
}
