import type { PGlite, PGliteOptions } from '@electric-sql/pglite';

export function createPrepared<O extends PGliteOptions>(
  pglite: typeof PGlite,
  options: O,
  how: { key: string; prepare?: (db: PGlite) => Promise<void> },
): Promise<PGlite>;
