/** Why a PDF cannot be opened, or one of its pages read (pdf-workers.ts's WorkerFailure has the same kinds). */
export type PdfTextFailure = { kind: 'password' | 'open'; message: string } | { kind: 'page' | 'text'; page: number; message: string };

export type PdfTextPage = { text: string; ocr: boolean } | { failure: PdfTextFailure };

export type PdfTextDocument = {
  readonly numPages: number;
  page(n: number): PdfTextPage;
  /** Page `n` as a PNG for OCR. */
  render(n: number): { image: ArrayBuffer } | { failure: PdfTextFailure };
  close(): void;
};

export function openPdfText(bytes: Uint8Array): Promise<PdfTextDocument | { failure: PdfTextFailure }>;

/** Loads PDFium ahead of a first PDF. */
export function loadPdfText(): Promise<void>;
