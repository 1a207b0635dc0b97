// What extraction can refuse. The upload maps the first two to 400 and the last to 413.
export class UnsupportedFormatError extends Error {
  override name = 'UnsupportedFormatError';
}
export class MalformedDocumentError extends Error {
  override name = 'MalformedDocumentError';
}
export class DocumentTooLargeError extends Error {
  override name = 'DocumentTooLargeError';
}
