import { readFileSync } from 'node:fs';

// The console is one static page (no build step); it calls the same HTTP API as every other client.
export const consolePage = readFileSync(new URL('./index.html', import.meta.url), 'utf8');


/** The console is for svc-user and above; svc-viewer opens the dashboards shared with it, nothing more. */
export const CONSOLE_ROLES = ['svc-user', 'svc-analyst', 'svc-engineer', 'svc-admin'];
