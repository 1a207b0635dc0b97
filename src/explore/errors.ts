import { badGateway, ProblemError } from '../platform/errors.ts';
import { GatewayError } from '../platform/gateway/index.ts';
import { EngineQueueError } from './engines/fairness.ts';
import { EngineError } from './engines/types.ts';

// Explore's domain errors as the answers they become, in one place (the app's error mapper): the query engine's
// refusals with its own message (and a Retry-After when the embedded engine's queue refuses), and a language-model
// gateway that failed after its retries.
const ENGINE_ANSWERS = {
  unauthenticated: [401, 'Unauthorized'],
  forbidden: [403, 'Forbidden'],
  invalid: [422, 'Unprocessable Content'],
  too_large: [413, 'Content Too Large'],
  timeout: [504, 'Gateway Timeout'],
  unavailable: [503, 'Service Unavailable'],
  busy: [429, 'Too Many Requests'],
  queue_timeout: [503, 'Service Unavailable'],
} as const;

export function exploreProblem(err: unknown): ProblemError | undefined {
  if (err instanceof ProblemError) return err;
  if (err instanceof EngineError) {
    const [status, title] = ENGINE_ANSWERS[err.kind];
    const detail = `The query engine answered: ${err.message}`;
    // the embedded engine's queue says when a retry can be served
    if (err instanceof EngineQueueError)
      return new ProblemError(
        status,
        title,
        detail,
        { retryAfter: err.retryAfterSeconds },
        { 'Retry-After': String(err.retryAfterSeconds) },
      );
    return new ProblemError(status, title, detail);
  }
  if (err instanceof GatewayError) return badGateway(`The language model gateway failed: ${err.message}`);
  return undefined;
}
