// @ts-check
// What an artifact's preview shows, by its extension: an image as an <img> (an SVG too, so nothing in it runs or
// becomes part of the page), JSON pretty-printed, CSV and TSV as a table of their first rows, anything else as text,
// or a line saying it is binary. Every image is read from this origin (get-artifact), as the page's CSP requires.
import { ApiError } from '../api.js';
import { h } from '../dom.js';
import { formatBytes } from '../format.js';
import { table } from '../parts.js';

/** Files larger than this are only downloaded; images may be larger, since the browser draws them itself. */
export const PREVIEW_LIMIT = 1024 * 1024;
const IMAGE_LIMIT = 20 * 1024 * 1024;
/** A table shows this many rows of a CSV or TSV file. */
export const TABLE_ROWS = 100;

const IMAGES = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg']);

/** @param {string} path */
const extension = (path) => {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return base.includes('.') ? base.slice(base.lastIndexOf('.') + 1).toLowerCase() : '';
};

/**
 * The largest file a preview is offered for.
 * @param {string} path
 */
export const previewLimit = (path) => (IMAGES.has(extension(path)) ? IMAGE_LIMIT : PREVIEW_LIMIT);

/**
 * Fields and records of delimited text (RFC 4180: a quoted field may hold the delimiter, a doubled quote or a line
 * break); a trailing line break makes no empty record.
 * @param {string} text
 * @param {string} delimiter
 * @returns {string[][]}
 */
export function parseDelimited(text, delimiter) {
  /** @type {string[][]} */
  const records = [];
  /** @type {string[]} */
  let record = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch !== '"') field += ch;
      else if (text[i + 1] === '"') (field += '"'), i++;
      else quoted = false;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === delimiter) record.push(field), (field = '');
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || record.length) record.push(field), records.push(record);
  return records;
}

/**
 * The first rows of a CSV or TSV file as a table, its first record as the header.
 * @param {string} text
 * @param {string} delimiter
 * @param {string} path
 */
function delimitedTable(text, delimiter, path) {
  const [head = [], ...rows] = parseDelimited(text, delimiter);
  const shown = rows.slice(0, TABLE_ROWS);
  return h(
    'div',
    { class: 'table-preview' },
    h('p', { class: 'muted', id: 'preview-rows' }, `${shown.length} of ${rows.length} rows`),
    table(
      head,
      shown.map((r) =>
        h(
          'tr',
          {},
          r.map((v) => h('td', {}, v)),
        ),
      ),
      { 'aria-label': `${path}, first ${shown.length} rows`, id: 'preview-table' },
    ),
  );
}

/**
 * @param {string} href
 * @param {string} path
 * @param {HTMLElement} preview
 */
export async function showPreview(href, path, preview) {
  const ext = extension(path);
  if (IMAGES.has(ext)) {
    preview.replaceChildren(h('h3', {}, path), h('img', { src: href, alt: path, class: 'preview-image' }));
    return;
  }
  const res = await fetch(href);
  if (!res.ok) throw new ApiError(`Download of ${path} failed: ${res.status} ${res.statusText}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const head = bytes.subarray(0, Math.min(bytes.length, 8000));
  if (head.includes(0)) {
    preview.replaceChildren(
      h('h3', {}, path),
      h('p', { class: 'muted' }, `${path} is binary (${formatBytes(bytes.length)}); download it instead.`),
    );
    return;
  }
  const text = new TextDecoder().decode(bytes.subarray(0, PREVIEW_LIMIT));
  preview.replaceChildren(h('h3', {}, path), textPreview(text, ext, path));
}

/**
 * @param {string} text
 * @param {string} ext
 * @param {string} path
 */
function textPreview(text, ext, path) {
  if (ext === 'csv' || ext === 'tsv') return delimitedTable(text, ext === 'csv' ? ',' : '\t', path);
  if (ext === 'json') {
    try {
      return h('pre', { class: 'preview json', tabindex: 0 }, JSON.stringify(JSON.parse(text), null, 2));
    } catch {
      // not valid JSON: shown as the text it is
    }
  }
  return h('pre', { class: 'preview', tabindex: 0 }, text);
}
