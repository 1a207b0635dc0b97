import type { GatewayError } from '../../platform/gateway/index.ts';

/** The chat model failed after its attempts: no answer was given (502). */
export class AnswerModelError extends Error {
  constructor(readonly gateway: GatewayError) {
    super(gateway.message, { cause: gateway });
    this.name = 'AnswerModelError';
  }
}
