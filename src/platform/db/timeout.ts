/** Every statement's time limit unless SVC_DB_STATEMENT_TIMEOUT_MS says otherwise: generous, and still an end. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 120_000;

/** Resolves with `fallback` when `work` takes longer than `ms`; the timer never keeps the process alive. */
export function withTimeout<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** For ping(): true when `probe` answers within 3 s, false when it fails or is late; never throws. */
export const answersSoon = (probe: Promise<unknown>): Promise<boolean> =>
  withTimeout(
    probe.then(
      () => true,
      () => false,
    ),
    3000,
    false,
  );
