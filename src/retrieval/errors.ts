import {
  badGateway,
  badRequest,
  forbidden,
  payloadTooLarge,
  ProblemError,
  unauthorized,
  unavailable,
  unprocessable,
} from '../platform/errors.ts';
import { TrinoError } from '../platform/trino/index.ts';
import { GatewayError } from '../platform/gateway/index.ts';
import { AnswerModelError } from './answer/errors.ts';
import { SearchBackendError } from './backends/search.ts';
import { DocumentTooLargeError, MalformedDocumentError, UnprocessableDocumentError, UnsupportedFormatError } from './ingest/errors.ts';

// Retrieval's domain errors as the answers they become, in one place (the app's error mapper): a file the service
// does not take (400), beyond a bound (413) or without text (422), and a gateway that failed after its retries (502:
// whatever was being written was not; a chat model's failure leaves no answer).
export function retrievalProblem(err: unknown): ProblemError | undefined {
  if (err instanceof ProblemError) return err;
  if (err instanceof UnsupportedFormatError || err instanceof MalformedDocumentError) return badRequest(err.message);
  if (err instanceof DocumentTooLargeError) return payloadTooLarge(err.message);
  if (err instanceof UnprocessableDocumentError) return unprocessable(err.message);
  if (err instanceof AnswerModelError) return badGateway(`The chat model failed, no answer was given: ${err.message}`);
  if (err instanceof GatewayError) return badGateway(`The embedding gateway failed, nothing was stored: ${err.message}`);
  if (err instanceof TrinoError) return lakeProblem(err);
  if (err instanceof SearchBackendError) return searchProblem(err);
  return undefined;
}

/**
 * OpenSearch failing a search-backend collection: a write (502, the document was not stored: the upload can be
 * sent again), or a question it could not rank (503 while it does not answer, 502 when it refused).
 */
function searchProblem(err: SearchBackendError): ProblemError {
  if (err.during === 'write')
    return badGateway(`The search backend failed while the document was indexed; nothing was stored: ${err.message}`);
  if (err.unreachable) return unavailable(`The search backend (OpenSearch) is unavailable: ${err.message}. Try again shortly.`);
  return badGateway(`The search backend (OpenSearch) refused the query: ${err.message}`);
}

/**
 * Trino's answers on a lake collection: the caller's token refused (401) or the caller refused by Trino's own rules
 * (403); a statement svc wrote that Trino refuses (502), a Trino that does not answer in time (504) or at all (503).
 */
function lakeProblem(err: TrinoError): ProblemError {
  const said = `Trino answered: ${err.message}`;
  if (err.kind === 'unauthenticated') return unauthorized(said);
  if (err.kind === 'forbidden') return forbidden(err.message);
  if (err.kind === 'invalid') return badGateway(`Trino refused a statement on the lake: ${err.message}`);
  if (err.kind === 'timeout') return new ProblemError(504, 'Gateway Timeout', said);
  return unavailable(said);
}
