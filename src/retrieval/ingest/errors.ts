// What extraction can refuse. Every message says what the file is and what the uploader can do about it.
// The upload maps the first two to 400, the too-large one to 413 and the unprocessable one to 422.

/** A kind of file the service does not index (legacy Office, archives, audio, executables, other binaries). */
export class UnsupportedFormatError extends Error {
  override name = 'UnsupportedFormatError';
}

/** A file of an accepted kind that cannot be read: truncated, damaged, or not what its name says. */
export class MalformedDocumentError extends Error {
  override name = 'MalformedDocumentError';
}

/** A file beyond a work bound: too many pages, a zip bomb, too many pixels, or past the time limit. */
export class DocumentTooLargeError extends Error {
  override name = 'DocumentTooLargeError';
}

/** A readable file the service will not index: it holds no text at all, or its structure is beyond a sane bound. */
export class UnprocessableDocumentError extends Error {
  override name = 'UnprocessableDocumentError';
}
