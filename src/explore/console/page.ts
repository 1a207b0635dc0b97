import { readFileSync } from 'node:fs';

// The console is one static page (no build step); it calls the same HTTP API as every other client.
export const consolePage = readFileSync(new URL('./index.html', import.meta.url), 'utf8');
