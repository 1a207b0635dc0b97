import { AsyncLocalStorage } from 'node:async_hooks';

// The request a decision is taken for, so the policy port can write the request id into its decision log without
// every service passing it down: the HTTP app factory runs each request inside `inRequest`.
const scope = new AsyncLocalStorage<{ requestId: string }>();

export const inRequest = <T>(requestId: string, fn: () => T): T => scope.run({ requestId }, fn);

export const currentRequestId = (): string | undefined => scope.getStore()?.requestId;
