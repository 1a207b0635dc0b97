import type { Sql } from '../../src/platform/db/index.ts';

/** A connection that counts the statements sent through it, to prove a request costs a fixed number of them. */
export function countingSql(inner: Sql): Sql & { count: number } {
  const counted = {
    count: 0,
    query: <T,>(text: string, params?: readonly unknown[]) => {
      counted.count += 1;
      return inner.query<T>(text, params);
    },
    exec: (script: string) => {
      counted.count += 1;
      return inner.exec(script);
    },
  };
  return counted;
}
