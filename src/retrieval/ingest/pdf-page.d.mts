import type { getDocumentProxy } from 'unpdf';

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;
type PdfPage = Awaited<ReturnType<Awaited<ReturnType<typeof getDocumentProxy>>['getPage']>>;

export function renderForOcr(pdf: PdfDocument, page: PdfPage, n: number): Promise<ArrayBuffer>;
export const OPEN_OPTIONS: { isEvalSupported: false; verbosity: 0; stopAtErrors: false };
