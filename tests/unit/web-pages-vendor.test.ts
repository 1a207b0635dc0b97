import { describe, expect, it } from 'vitest';
import { PAGE_CSP, pageRoutes } from '../../src/platform/web/pages.ts';

// pageRoutes' vendor files made in memory (a bundle): made on the first request, kept, and made again after a failure.
describe('pageRoutes vendor content made in memory', () => {
  const page = new URL('../../src/explore/console/index.html', import.meta.url);

  it('makes the file on its first request only, and serves it under the page CSP', async () => {
    let made = 0;
    const app = pageRoutes({ page, dirs: [], devIdentity: false, vendor: { 'made.js': async () => `export const n = ${++made};` } });
    expect(made).toBe(0);
    const first = await app.request('/ui/vendor/made.js');
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(first.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(await first.text()).toBe('export const n = 1;');
    expect(await (await app.request('/ui/vendor/made.js')).text()).toBe('export const n = 1;');
    expect(made).toBe(1);
  });

  it('tries again after a failure instead of keeping it', async () => {
    let calls = 0;
    const app = pageRoutes({
      page,
      dirs: [],
      devIdentity: false,
      vendor: {
        'flaky.js': async () => {
          if (++calls === 1) throw new Error('the bundler failed');
          return 'export {};';
        },
      },
    });
    expect((await app.request('/ui/vendor/flaky.js')).status).toBe(500);
    const again = await app.request('/ui/vendor/flaky.js');
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('export {};');
  });
});
