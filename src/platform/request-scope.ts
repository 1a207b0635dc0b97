import { AsyncLocalStorage } from 'node:async_hooks';
import type { RecordedSpan } from './tracing-export.ts';

// The request being answered, for what must follow it down its calls without every service passing it: its id, which
// the policy port writes into its decision log, and its open trace (tracing.ts). The HTTP app factory runs each
// request inside `inRequest`: one async context frame a request, whatever it carries (an empty frame around a
// question measured 0.16 ms at p50 against none, more than recording its spans: tracing enters no second one).

/** A trace being recorded: the span the next one opens under (its root, or the step running now). */
export type OpenTrace = { current: RecordedSpan | undefined };

/** One store a request, its fields set as the request goes (the trace while one is open). */
export type RequestScope = { readonly requestId: string | undefined; trace: OpenTrace | undefined };

export const requestScope = new AsyncLocalStorage<RequestScope>();

export const inRequest = <T>(requestId: string, fn: () => T): T => requestScope.run({ requestId, trace: undefined }, fn);

export const currentRequestId = (): string | undefined => requestScope.getStore()?.requestId;
