import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Env } from './config.ts';
import { openObjectStore, type ObjectStore } from './objects/index.ts';

// Where dashboard pages live, shared by explore (which writes them) and the runtime (which reads them): the object
// store at SVC_DASHBOARDS_STORE (a folder or s3://bucket/prefix), else the folder SVC_DASHBOARDS_DIR (its earlier
// name), else `dashboards` in the data folder. Each page is one object named by its dashboard's id.
export type PagesConfig = { DASHBOARDS_STORE?: string | undefined; DASHBOARDS_DIR?: string | undefined };

export const openDashboardPages = (cfg: PagesConfig, dataDir: string, env: Env): ObjectStore =>
  openObjectStore(cfg.DASHBOARDS_STORE ?? cfg.DASHBOARDS_DIR ?? join(dataDir, 'dashboards'), env);

export const pageKey = (id: string) => `${id}.html`;
export const pageDigest = (page: string | Uint8Array) => createHash('sha256').update(page).digest('hex');

/** The largest page either side handles: a page holds at most SVC_MAX_RESULT_BYTES of rows, and some markup. */
export const MAX_PAGE_BYTES = 64 * 1024 * 1024;
