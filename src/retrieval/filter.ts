import { badRequest } from '../platform/errors.ts';
import type { RetrievalDeps } from './deps.ts';
import { filteredDocuments, knownDocuments, type DocumentFilter } from './document-store.ts';
import type { Format } from './ingest/index.ts';

export type { DocumentFilter };

/** The formats a document can be stored as (documents' `format`), which a filter may name. */
export const FORMATS = ['pdf', 'docx', 'pptx', 'xlsx', 'html', 'markdown', 'text', 'image'] as const satisfies readonly Format[];

/**
 * The documents of the collection a query's filter keeps, once the policy has let the caller query it: undefined
 * when there is no filter (every document). A document id the collection does not hold is a 400 naming it (a typo,
 * or a document deleted since the page listed it), not a silent empty answer; the ids are UUIDs, so saying that one
 * is not in this collection reveals nothing about any other.
 */
export async function narrowTo(deps: RetrievalDeps, slug: string, filter: DocumentFilter | undefined): Promise<string[] | undefined> {
  if (!filter || Object.values(filter).every((v) => v === undefined)) return undefined;
  if (filter.document_ids) {
    const known = await knownDocuments(deps.db, slug, filter.document_ids);
    const errors = filter.document_ids.flatMap((id, i) =>
      known.has(id.toLowerCase())
        ? []
        : [{ location: `json.filter.document_ids.${i}`, message: `${id} is not a document of collection '${slug}'` }],
    );
    if (errors.length > 0)
      throw badRequest(
        `filter.document_ids names ${errors.length === 1 ? 'a document' : `${errors.length} documents`} that collection '${slug}' does not hold: ` +
          `${errors.map((e) => e.message.split(' ')[0]).join(', ')}. List its documents with GET /collections/${slug}/documents.`,
        { errors },
      );
  }
  return filteredDocuments(deps.db, slug, filter);
}

/** What the audit record keeps of a filter: the fields given. */
export const auditedFilter = (filter: DocumentFilter | undefined): DocumentFilter | undefined =>
  filter && Object.values(filter).some((v) => v !== undefined)
    ? (Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as DocumentFilter)
    : undefined;
