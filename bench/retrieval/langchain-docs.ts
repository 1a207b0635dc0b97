// The documents of the LangChain ingestion bench (langchain.ts) and the checks that each side stored what it made.
//   ten-page documents: 40 lines a page, as bench/retrieval/index.ts's ingestion uses
//   a mixed folder: PDFs of 1 to 40 pages, pages of 8 to 48 lines of 3 to 10 words (inside the page: text past its edge is not read), some pages with paragraphs
//   (blank lines): LangChain's PDF loaders read only PDFs, so "mixed" is in size and layout, not format
import { createHash } from 'node:crypto';
import type { Database } from '../../src/platform/db/index.ts';
import { chunkPages } from '../../src/retrieval/chunk.ts';
import { writePdf } from '../../tests/support/pdf-writer.ts';
import { lcg } from './questions.ts';

/** A document as written: its pages' lines, and the PDF. */
export type BenchDoc = { pages: string[][]; bytes: Uint8Array };

const VOCABULARY = (
  'river hill valley stone bridge forest meadow harbour tower market winter summer engine signal ledger invoice ' +
  'contract policy account balance report quarter region station network sensor cable voltage pressure sample'
).split(' ');

const asDoc = (pages: string[][]): BenchDoc => ({ pages, bytes: writePdf(pages.map((lines) => ({ lines }))) });

export const tenPageDoc = (d: number): BenchDoc =>
  asDoc(
    Array.from({ length: 10 }, (_, p) =>
      Array.from({ length: 40 }, (_, l) => `document ${d} page ${p} line ${l} words about rivers and hills`),
    ),
  );

const MIXED_PAGES = [1, 1, 2, 3, 4, 6, 8, 12, 20, 40];

export function mixedDoc(d: number): BenchDoc {
  const next = lcg(7000 + d);
  const pick = (n: number) => Math.floor(next() * n);
  const pageCount = MIXED_PAGES[d % MIXED_PAGES.length]!;
  return asDoc(
    Array.from({ length: pageCount }, (_, p) => {
      const lines = 8 + pick(41);
      const paragraphs = pick(3) === 0;
      return Array.from({ length: lines }, (_, l) =>
        paragraphs && l % 7 === 6
          ? ''
          : [`d${d}p${p}l${l}`, ...Array.from({ length: 2 + pick(8) }, () => VOCABULARY[pick(VOCABULARY.length)]!)].join(' '),
      );
    }),
  );
}

export const pageCount = (docs: BenchDoc[]) => docs.reduce((s, d) => s + d.pages.length, 0);

/**
 * svc's side: each uploaded document holds as many chunks as its upload answered, and their texts in order are
 * what svc's chunker makes of the document's words (the words written into the PDF, whitespace normalised).
 */
export async function checkSvcStored(
  db: Database,
  uploads: { documentId: string; chunkCount: number; doc: BenchDoc }[],
  chunking: { size: number; overlap: number; maxChars: number },
): Promise<number> {
  let total = 0;
  for (const { documentId, chunkCount, doc } of uploads) {
    const rows = await db.query<{ text: string }>(`SELECT text FROM retrieval_chunks WHERE document_id = $1 ORDER BY ordinal`, [
      documentId,
    ]);
    const expected = chunkPages(
      doc.pages.map((lines, i) => ({ page: i + 1, text: lines.join('\n') })),
      chunking,
    ).map((c) => c.text);
    if (rows.length !== chunkCount)
      throw new Error(`svc stored ${rows.length} chunks of document ${documentId}, its upload said ${chunkCount}`);
    if (rows.length !== expected.length || rows.some((r, i) => r.text !== expected[i]))
      throw new Error(
        `svc's chunks of document ${documentId} are not its chunker's chunks of the document's words: ${JSON.stringify(
          rows.map((r) => r.text).find((t, i) => t !== expected[i]),
        )} against ${JSON.stringify(expected.find((t, i) => t !== rows[i]?.text))}`,
      );
    total += rows.length;
  }
  return total;
}

const digest = (texts: string[]) => createHash('sha256').update(texts.sort().join('\0')).digest('hex');

/** LangChain's side: PGVector holds as many chunks in the collection as the splitter made, with the same texts. */
export async function checkLangChainStored(db: Database, collection: string, made: { chunks: number; digest: string }): Promise<number> {
  const rows = await db.query<{ document: string }>(
    `SELECT e.document FROM langchain_pg_embedding e JOIN langchain_pg_collection c ON c.uuid = e.collection_id WHERE c.name = $1`,
    [collection],
  );
  if (rows.length !== made.chunks)
    throw new Error(`PGVector holds ${rows.length} chunks in ${collection}, the splitter made ${made.chunks}`);
  if (digest(rows.map((r) => r.document)) !== made.digest)
    throw new Error(`PGVector's chunks in ${collection} are not the texts the splitter made`);
  return rows.length;
}
