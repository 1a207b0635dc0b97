import { Hono } from 'hono';
import type { Database } from '../db/index.ts';
import type { AppEnv } from '../http.ts';
import { CHAIN_VERSION } from './canonical.ts';
import { chainHead } from './chain.ts';

/**
 * GET /audit/head: the latest seq and hash, for an outside system to keep (`svc audit verify --anchor SEQ:HASH`
 * then proves nothing up to it was rewritten). Any identified caller may read it: it reveals a count, nothing more.
 */
export function auditHeadRoutes(db: Database) {
  return new Hono<AppEnv>().get('/head', async (c) => {
    const head = await chainHead(db);
    return c.json({ seq: head.seq, hash: head.hash, encoding: CHAIN_VERSION });
  });
}
