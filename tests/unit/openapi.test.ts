import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../src/platform/web/pages.ts';
import { runtimeHarness, type RuntimeHarness } from '../support/dashboards.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import {
  documentedRoutes,
  expectConforms,
  expectValidOpenApi31,
  fetchDocument,
  servedRoutes,
  type OpenApiDocument,
} from '../support/openapi-contract.ts';

// The OpenAPI documents of explore and the dashboards runtime against the apps that serve them: valid OpenAPI 3.1,
// the same routes both ways, and real answers (a query on the embedded engine, a list, a 400, a 401, a 404) that
// match the schema documented for their status.

const identity = (who: { user: string; role: string }) => ({ 'X-User-Id': who.user, 'X-User-Role': who.role });
const postJson = (body: unknown, headers: Record<string, string>) => ({
  method: 'POST',
  headers: { ...headers, 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

describe('explore: GET /openapi.json', () => {
  let h: ExploreHarness;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    h = await exploreHarness();
    doc = await fetchDocument(h.app);
  }, 60_000);
  afterAll(() => h?.close());

  it('is valid OpenAPI 3.1, open to anyone like the console', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expectValidOpenApi31(doc);
    // the validator can refuse: a response without its description is not OpenAPI
    const broken = structuredClone(doc) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>>;
    };
    delete broken.paths['/me']!.get!.responses['200']!.description;
    await expect(expectValidOpenApi31(broken as unknown as OpenApiDocument)).rejects.toThrow();
  });

  it('documents every route the app serves, and serves every documented route', () => {
    expect(documentedRoutes(doc)).toEqual(servedRoutes(h.app));
    expect(documentedRoutes(doc)).toContain('POST /query');
    expect(documentedRoutes(doc)).toContain('PATCH /dashboards/{id}/share');
  });

  it('names the caller schemes and refers every error to the one problem component', () => {
    const schemes = (doc.components as { securitySchemes?: Record<string, { name?: string; scheme?: string }> }).securitySchemes ?? {};
    expect(
      Object.values(schemes)
        .map((s) => s.name ?? s.scheme)
        .sort(),
    ).toEqual(['X-User-Groups', 'X-User-Id', 'X-User-Role', 'X-User-Token', 'bearer']);
    // under SVC_AUTH_MODE=headers a token is not verified: the ingress's headers are the way in (auth-services.test.ts: jwt)
    expect(doc.security).toEqual([{ userId: [], userRole: [], userGroups: [], userToken: [] }, { userId: [] }]);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) >= 400) expect('$ref' in response, `${method} ${path} ${status}`).toBe(true);
        }
        expect(op.responses['500'], `${method} ${path} documents 500`).toBeDefined();
      }
    }
    expect(doc.components.schemas?.Problem).toBeDefined();
  });

  it('POST /query on the embedded engine answers as documented', async () => {
    const res = await h.app.request('/query', postJson({ question: 'how many customers per nation', force: true }, identity(as.analyst)));
    expect(res.status).toBe(200);
    const body = (await expectConforms(doc, 'POST', '/query', res)) as { preview_rows: unknown[]; dashboard_id: string };
    expect(body.preview_rows.length).toBeGreaterThan(0);
    expect(body.dashboard_id).toEqual(expect.any(String));
  }, 60_000);

  it('GET /dashboards answers as documented', async () => {
    await h.app.request('/query', postJson({ question: 'how many orders per order status', force: true }, identity(as.analyst)));
    const res = await h.app.request('/dashboards?scope=mine', { headers: identity(as.analyst) });
    expect(res.status).toBe(200);
    const body = (await expectConforms(doc, 'GET', '/dashboards', res)) as { dashboards: unknown[] };
    expect(body.dashboards.length).toBeGreaterThan(0);
  }, 60_000);

  it('a body that fails its schema is the same 400 as before, every failing field listed, as documented', async () => {
    const res = await h.app.request('/query', postJson({ question: '   ', execute: 'yes' }, identity(as.analyst)));
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = (await expectConforms(doc, 'POST', '/query', res)) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    expect(body.errors).toEqual([
      { location: 'json.question', message: 'question must not be empty' },
      { location: 'json.execute', message: expect.stringContaining('boolean') },
    ]);
    expect(body.detail).toBe(
      `Invalid request body: json.question: question must not be empty; json.execute: ${(body.errors as { message: string }[])[1]!.message}`,
    );
  });

  it('a query parameter, or no body at all, is refused the same way', async () => {
    const scope = await h.app.request('/dashboards?scope=everything', { headers: identity(as.analyst) });
    expect(scope.status).toBe(400);
    expect(((await expectConforms(doc, 'GET', '/dashboards', scope)) as { errors: { location: string }[] }).errors[0]!.location).toBe(
      'query.scope',
    );
    const none = await h.app.request('/query', { method: 'POST', headers: identity(as.analyst) });
    expect(none.status).toBe(400);
    expect(((await expectConforms(doc, 'POST', '/query', none)) as { errors: { location: string }[] }).errors[0]!.location).toBe(
      'json.question',
    );
  });

  it('a body that is not JSON is a 415 that says what to send, as documented', async () => {
    const res = await h.app.request('/query', {
      method: 'POST',
      headers: { ...identity(as.analyst), 'Content-Type': 'text/plain' },
      body: 'how many nations',
    });
    expect(res.status).toBe(415);
    const body = (await expectConforms(doc, 'POST', '/query', res)) as { detail: string };
    expect(body.detail).toContain('Content-Type (text/plain)');
    expect(body.detail).toContain('application/json');
  });

  it('no identity is a 401 as documented', async () => {
    const res = await h.app.request('/dashboards');
    expect(res.status).toBe(401);
    await expectConforms(doc, 'GET', '/dashboards', res);
  });

  it('a dashboard nobody published is a 404 as documented', async () => {
    const res = await h.app.request('/dashboards/no-such-dashboard/access', { headers: identity(as.analyst) });
    expect(res.status).toBe(404);
    await expectConforms(doc, 'GET', '/dashboards/{id}/access', res);
  });

  it('GET /docs shows every operation under the strict CSP, with no script or inline style', async () => {
    const res = await h.app.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    const page = await res.text();
    expect(page).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    for (const route of documentedRoutes(doc)) expect(page).toContain(route.replace(/[{}]/g, (ch) => ch));
    expect(page).toContain('href="openapi.json"');
  });
});

describe('dashboards runtime: GET /openapi.json', () => {
  let h: ExploreHarness;
  let rt: RuntimeHarness;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    h = await exploreHarness();
    rt = await runtimeHarness(h);
    doc = await fetchDocument(rt.app);
  }, 60_000);
  afterAll(async () => {
    await rt?.close();
    await h?.close();
  });

  it('is valid OpenAPI 3.1 and documents exactly what the runtime serves', async () => {
    await expectValidOpenApi31(doc);
    expect(documentedRoutes(doc)).toEqual(['GET /d/{id}']);
    expect(servedRoutes(rt.app)).toEqual(['GET /d/{id}']);
  });

  it('a viewer with no identity is a 401, and an unknown dashboard a 404, as documented', async () => {
    const anonymous = await rt.app.request('/d/some-dashboard');
    expect(anonymous.status).toBe(401);
    await expectConforms(doc, 'GET', '/d/{id}', anonymous);
    const unknown = await rt.app.request('/d/no-such-dashboard', { headers: identity(as.analyst) });
    expect(unknown.status).toBe(404);
    await expectConforms(doc, 'GET', '/d/{id}', unknown);
  });

  it('a published dashboard opens as documented', async () => {
    const asked = await h.app.request('/query', postJson({ question: 'how many nations per region', force: true }, identity(as.analyst)));
    const { dashboard_id } = (await asked.json()) as { dashboard_id: string };
    const res = await rt.app.request(`/d/${dashboard_id}`, { headers: identity(as.analyst) });
    expect(res.status).toBe(200);
    expect(String(await expectConforms(doc, 'GET', '/d/{id}', res))).toMatch(/<html/i);
  }, 60_000);
});
