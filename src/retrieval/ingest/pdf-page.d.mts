import type { getDocumentProxy } from 'unpdf';

type PdfPage = Awaited<ReturnType<Awaited<ReturnType<typeof getDocumentProxy>>['getPage']>>;

export function pageText(page: PdfPage): Promise<string>;
export function worthOcr(page: PdfPage): Promise<boolean>;
export const OPEN_OPTIONS: { isEvalSupported: false; verbosity: 0; stopAtErrors: false };
