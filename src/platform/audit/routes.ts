import { createRoute, z } from '@hono/zod-openapi';
import type { Database } from '../db/index.ts';
import { apiRoutes, jsonResponse, problems } from '../openapi/index.ts';
import { CHAIN_VERSION } from './canonical.ts';
import { chainHead } from './chain.ts';

const head = createRoute({
  method: 'get',
  path: '/head',
  summary: 'The audit chain head: its latest seq and hash, for an outside system to keep',
  responses: {
    200: jsonResponse(
      z.object({ seq: z.int(), hash: z.string(), encoding: z.string().describe('The chain encoding version') }),
      'The head',
    ),
    ...problems(401, 503),
  },
});

/**
 * GET /audit/head: the latest seq and hash, for an outside system to keep (`svc audit verify --anchor SEQ:HASH`
 * then proves nothing up to it was rewritten). Any identified caller may read it: it reveals a count, nothing more.
 */
export function auditHeadRoutes(db: Database) {
  return apiRoutes().openapi(head, async (c) => {
    const { seq, hash } = await chainHead(db);
    return c.json({ seq, hash, encoding: CHAIN_VERSION }, 200);
  });
}
