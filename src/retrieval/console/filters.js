// @ts-check
// The filter applied to search and answer: documents (several may be chosen), format, uploaded on or after a day,
// uploaded before a day. The service applies it after the collection's policy, before ranking. Days are the
// reader's local days, sent as instants.
import { h } from './dom.js';

/** @typedef {import('./types.ts').DocumentView} DocumentView */
/** @typedef {import('./types.ts').DocumentFilter} DocumentFilter */

/**
 * Builds the controls in `container` and answers the filter they say now.
 * @param {HTMLElement} container
 */
export function createFilters(container) {
  const documents = h('select', { id: 'f-docs', multiple: true, size: 3 });
  const format = h('select', { id: 'f-format' });
  const after = h('input', { id: 'f-after', type: 'date' });
  const before = h('input', { id: 'f-before', type: 'date' });
  const clear = h('button', { type: 'button', id: 'f-clear' }, 'Clear filter');
  container.append(
    h('label', { for: 'f-docs' }, 'Only these documents (none chosen: all)'),
    documents,
    h('label', { for: 'f-format' }, 'Format'),
    format,
    h('label', { for: 'f-after' }, 'Uploaded on or after'),
    after,
    h('label', { for: 'f-before' }, 'Uploaded before'),
    before,
    h('p', {}, clear),
  );
  clear.addEventListener('click', () => {
    for (const o of documents.options) o.selected = false;
    format.value = '';
    after.value = '';
    before.value = '';
  });

  return {
    /**
     * The open collection's documents, as choices; what was chosen and still exists stays chosen.
     * @param {DocumentView[]} docs
     */
    setDocuments(docs) {
      const chosen = new Set([...documents.selectedOptions].map((o) => o.value));
      documents.replaceChildren(...docs.map((d) => h('option', { value: d.document_id, selected: chosen.has(d.document_id) }, d.filename)));
      const formats = [...new Set(docs.map((d) => d.format))].sort();
      const kept = format.value;
      format.replaceChildren(h('option', { value: '' }, 'any'), ...formats.map((f) => h('option', { value: f }, f)));
      format.value = formats.includes(kept) ? kept : '';
    },
    /** @returns {DocumentFilter | undefined} */
    value() {
      /** @type {DocumentFilter} */
      const filter = {};
      const ids = [...documents.selectedOptions].map((o) => o.value);
      if (ids.length > 0) filter.document_ids = ids;
      if (format.value) filter.formats = [format.value];
      if (after.value) filter.uploaded_after = new Date(`${after.value}T00:00`).toISOString();
      if (before.value) filter.uploaded_before = new Date(`${before.value}T00:00`).toISOString();
      return Object.keys(filter).length > 0 ? filter : undefined;
    },
  };
}
