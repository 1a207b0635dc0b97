import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/platform/db/index.ts';
import { PAGE_CSP } from '../../src/platform/web/pages.ts';
import { runtimeHarness, type RuntimeHarness } from '../support/dashboards.ts';
import { as, exploreHarness, type ExploreHarness } from '../support/explore.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import {
  documentedRoutes,
  expectConforms,
  expectValidOpenApi31,
  fetchDocument,
  servedRoutes,
  type OpenApiDocument,
} from '../support/openapi-contract.ts';

// The OpenAPI documents of explore, retrieval and the dashboards runtime against the apps that serve them: valid
// OpenAPI 3.1, the same routes both ways, and real answers (a query, an upload, a list, a 400, a 401, a 403, a 404)
// that match the schema documented for their status.

const identity = (who: { user: string; role: string }) => ({ 'X-User-Id': who.user, 'X-User-Role': who.role });
const postJson = (body: unknown, headers: Record<string, string>) => ({
  method: 'POST',
  headers: { ...headers, 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

/** The identity schemes, and every error of every operation a reference to the shared problem responses (500 too). */
function expectSharedComponents(doc: OpenApiDocument): void {
  const schemes = (doc.components as { securitySchemes?: Record<string, { name?: string; scheme?: string }> }).securitySchemes ?? {};
  expect(
    Object.values(schemes)
      .map((s) => s.name ?? s.scheme)
      .sort(),
  ).toEqual(['X-Query-User', 'X-User-Groups', 'X-User-Id', 'X-User-Role', 'X-User-Token', 'bearer']);
  // under SVC_AUTH_MODE=headers a token is not verified: the ingress's headers are the way in (auth-services.test.ts: jwt)
  expect(doc.security).toEqual([{ userId: [], userRole: [], userGroups: [], userToken: [] }, { userId: [] }, { queryUser: [] }]);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) >= 400) expect('$ref' in response, `${method} ${path} ${status}`).toBe(true);
      }
      expect(op.responses['500'], `${method} ${path} documents 500`).toBeDefined();
    }
  }
  expect(doc.components.schemas?.Problem).toBeDefined();
}

/**
 * The GET /docs page: Scalar's reference, loaded from this origin only (no inline script, no CDN), configured to read
 * this service's openapi.json, under PAGE_CSP plus a style nonce that is new on every answer.
 */
async function expectDocsPage(
  app: { request(path: string, init?: RequestInit): Response | Promise<Response> },
  doc: OpenApiDocument,
): Promise<void> {
  const res = await app.request('/docs');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  const page = await res.text();
  const nonce = /<meta property="csp-nonce" content="([^"]+)">/.exec(page)?.[1];
  expect(csp).toBe(PAGE_CSP.replace("style-src 'self'", `style-src 'self' 'nonce-${nonce}'; style-src-attr 'unsafe-inline'`));
  const again = (await app.request('/docs')).headers.get('content-security-policy');
  expect(again).not.toBe(csp);
  expect(page).toContain(`<title>${(doc as unknown as { info: { title: string } }).info.title} API</title>`);
  expect(page).toContain('data-configuration="{&quot;url&quot;:&quot;openapi.json&quot;');
  const sources = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  for (const [, attrs, body] of sources)
    expect(/\bsrc=/.test(attrs!) || (/type="application\/json"/.test(attrs!) && body === '')).toBe(true);
  const scripts = sources.flatMap(([, attrs]) => /\bsrc="([^"]+)"/.exec(attrs!)?.[1] ?? []);
  expect(scripts).toEqual(['docs/setup.js', expect.stringMatching(/^docs\/scalar-api-reference-\d+\.\d+\.\d+\.js$/)]);
  for (const src of scripts) {
    const asset = await app.request(`/${src}`, { headers: { 'Accept-Encoding': 'identity' } });
    expect(asset.status, src).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
  }
  const bundle = await (await app.request(`/${scripts[1]}`)).text();
  expect(bundle).toContain('@scalar/api-reference');
}

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

  it('names the caller schemes and refers every error to the one problem component', () => expectSharedComponents(doc));

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

  it("GET /docs is Scalar's reference of the document, from this origin, under the strict CSP and a style nonce", () =>
    expectDocsPage(h.app, doc));
});

describe('retrieval: GET /openapi.json', () => {
  let h: RetrievalHarness;
  let doc: OpenApiDocument;
  const ids = (w: { user: string; roles: string }) => ({ 'X-User-Id': w.user, 'X-User-Role': w.roles });
  const upload = (slug: string, name: string, text: string, headers: Record<string, string>) => {
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/markdown' }), name);
    return h.app.request(`/collections/${slug}/documents`, { method: 'POST', headers, body: form });
  };
  beforeAll(async () => {
    h = await retrievalHarness(await openPglite({}));
    doc = await fetchDocument(h.app);
    await h.json('POST', '/collections', who.admin, { slug: 'handbook', name: 'Handbook' });
    await h.json('POST', '/collections', who.admin, { slug: 'board', name: 'Board', allowed_roles: ['svc-admin'] });
  }, 60_000);
  afterAll(() => h?.close());

  it('is valid OpenAPI 3.1 and documents exactly what retrieval serves', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expectValidOpenApi31(doc);
    expect(documentedRoutes(doc)).toEqual(servedRoutes(h.app));
    for (const route of [
      'POST /collections',
      'POST /collections/{slug}/documents',
      'POST /collections/{slug}/query',
      'POST /collections/{slug}/answer',
      'GET /audit/queries',
      'GET /audit/head',
    ])
      expect(documentedRoutes(doc)).toContain(route);
  });

  it('names the caller schemes and refers every error to the one problem component', () => expectSharedComponents(doc));

  it('gives each path parameter the constraint that validates it', () => {
    type Param = { name: string; in: string; required: boolean; schema: Record<string, unknown> };
    const params = (path: string, method: string) =>
      Object.fromEntries(((doc.paths[path]![method] as unknown as { parameters: Param[] }).parameters ?? []).map((p) => [p.name, p]));
    const page = params('/collections/{slug}/documents/{document_id}/pages/{page}', 'get');
    expect(page.slug).toMatchObject({
      in: 'path',
      required: true,
      schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$' },
    });
    expect(page.document_id!.schema).toMatchObject({ type: 'string', format: 'uuid' });
    expect(page.page!.schema).toMatchObject({ type: 'integer', minimum: 1 });
    expect(params('/audit/queries/{id}/feedback', 'post').id!.schema).toMatchObject({ type: 'integer', minimum: 1 });
    type Body = {
      requestBody: { content: { 'application/json': { schema: Record<string, unknown> & { properties: Record<string, unknown> } } } };
    };
    const body = (path: string, method: string) =>
      (doc.paths[path]![method] as unknown as Body).requestBody.content['application/json'].schema;
    // the server's own ceiling (SVC_MAX_TOP_K, 50 by default), and a patch must name something
    expect(body('/collections/{slug}/query', 'post').properties.top_k).toMatchObject({ type: 'integer', minimum: 1, maximum: 50 });
    expect(body('/collections/{slug}/answer', 'post').properties.top_k).toMatchObject({ maximum: 50 });
    expect(body('/collections/{slug}', 'patch')).toMatchObject({ minProperties: 1, additionalProperties: false });
    // a question is text that trim() leaves non-empty, in words any regex engine reads alike
    const question = new RegExp((body('/collections/{slug}/query', 'post').properties.question as { pattern: string }).pattern);
    for (const blank of ['', ' ', '\t\n', '\u00a0\u3000\ufeff']) expect(question.test(blank), JSON.stringify(blank)).toBe(false);
    for (const filled of ['leave', ' leave ', '\u001c']) expect(question.test(filled), JSON.stringify(filled)).toBe(true);
    expect(params('/audit/queries', 'get').limit).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
    });
  });

  it('documents the upload as a multipart file part, and a streamed upload answers as documented', async () => {
    const body = (doc.paths['/collections/{slug}/documents']!.post as unknown as { requestBody: unknown }).requestBody;
    expect(body).toEqual({
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: { file: expect.objectContaining({ type: 'string', format: 'binary' }) },
          },
        },
      },
    });
    const text = '# Leave\n\nEvery employee gets twenty-five days of paid leave a year.\n';
    const created = await upload('handbook', 'leave.md', text, ids(who.admin));
    expect(created.status).toBe(201);
    expect(await expectConforms(doc, 'POST', '/collections/{slug}/documents', created)).toMatchObject({
      status: 'INDEXED',
      duplicate: false,
    });
    const again = await upload('handbook', 'leave-copy.md', text, ids(who.admin));
    expect(again.status).toBe(200);
    expect(await expectConforms(doc, 'POST', '/collections/{slug}/documents', again)).toMatchObject({ duplicate: true });
    // not multipart: the streaming path refuses it as before, a 400 saying what to send
    const plain = await h.app.request('/collections/handbook/documents', {
      method: 'POST',
      headers: { ...ids(who.admin), 'Content-Type': 'text/plain' },
      body: text,
    });
    expect(plain.status).toBe(400);
    expect(((await expectConforms(doc, 'POST', '/collections/{slug}/documents', plain)) as { detail: string }).detail).toContain(
      'multipart/form-data',
    );
  });

  it('a query, the collections, their documents and the audit answer as documented', async () => {
    await upload('handbook', 'expenses.md', '# Expenses\n\nTaxis are refunded with a receipt.\n', ids(who.admin));
    const query = await h.app.request('/collections/handbook/query', postJson({ question: 'how many days of leave' }, ids(who.analyst)));
    expect(query.status).toBe(200);
    const answered = (await expectConforms(doc, 'POST', '/collections/{slug}/query', query)) as { chunks: { document_id: string }[] };
    expect(answered.chunks.length).toBeGreaterThan(0);
    for (const [path, template] of [
      ['/collections', '/collections'],
      ['/collections/handbook', '/collections/{slug}'],
      ['/collections/handbook/documents', '/collections/{slug}/documents'],
      [
        `/collections/handbook/documents/${answered.chunks[0]!.document_id}/pages/1`,
        '/collections/{slug}/documents/{document_id}/pages/{page}',
      ],
      ['/audit/queries?limit=5', '/audit/queries'],
      ['/audit/head', '/audit/head'],
    ] as const) {
      const res = await h.app.request(path, { headers: ids(who.admin) });
      expect(res.status, path).toBe(200);
      await expectConforms(doc, 'GET', template, res);
    }
  });

  it('an answer, whole or as an event stream, answers as documented, and so does its feedback', async () => {
    const whole = await h.app.request(
      '/collections/handbook/answer',
      postJson({ question: 'how many days of paid leave' }, ids(who.analyst)),
    );
    expect(whole.status).toBe(200);
    const { audit_id } = (await expectConforms(doc, 'POST', '/collections/{slug}/answer', whole)) as { audit_id: number };
    const streamed = await h.app.request(
      '/collections/handbook/answer',
      postJson({ question: 'how many days of paid leave', stream: true }, ids(who.analyst)),
    );
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await expectConforms(doc, 'POST', '/collections/{slug}/answer', streamed)) as { event: string; data: string }[];
    expect(events.map((e) => e.event)).toEqual(['retrieval', ...events.slice(1, -2).map(() => 'delta'), 'citations', 'done']);
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ grounded: true, audit_id: expect.any(Number) });
    const rated = await h.app.request(`/audit/queries/${audit_id}/feedback`, postJson({ rating: 'up' }, ids(who.analyst)));
    expect(rated.status).toBe(201);
    await expectConforms(doc, 'POST', '/audit/queries/{id}/feedback', rated);
  });

  it('the refusals that occur are the documented ones: 400, 401, 403, 404, 409, 415', async () => {
    const cases: [string, string, string, RequestInit, number][] = [
      ['POST', '/collections/handbook/query', '/collections/{slug}/query', postJson({ question: ' ', top_k: 0 }, ids(who.analyst)), 400],
      ['GET', '/collections/Not_A_Slug', '/collections/{slug}', { headers: ids(who.analyst) }, 400],
      ['GET', '/collections', '/collections', {}, 401],
      ['POST', '/collections/board/query', '/collections/{slug}/query', postJson({ question: 'minutes' }, ids(who.analyst)), 403],
      ['POST', '/collections', '/collections', postJson({ slug: 'refused', name: 'Refused' }, ids(who.viewer)), 403],
      ['GET', '/collections/board', '/collections/{slug}', { headers: ids(who.analyst) }, 404],
      ['GET', '/collections/board/watch', '/collections/{slug}/watch', { headers: ids(who.analyst) }, 404],
      ['POST', '/collections', '/collections', postJson({ slug: 'handbook', name: 'Again' }, ids(who.admin)), 409],
    ];
    for (const [method, path, template, init, status] of cases) {
      const res = await h.app.request(path, { method, ...init });
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      await expectConforms(doc, method, template, res);
    }
  });

  it('text the database cannot store (a NUL character) is a 400 naming the field, and the document says so', async () => {
    const createBody = (
      doc.paths['/collections']!.post as unknown as {
        requestBody: { content: { 'application/json': { schema: { properties: Record<string, { pattern?: string }> } } } };
      }
    ).requestBody.content['application/json'].schema;
    expect(new RegExp(createBody.properties.name!.pattern!).test('a\u0000b')).toBe(false);
    const cases: [string, string, string, unknown, string][] = [
      ['POST', '/collections', '/collections', { slug: 'nul', name: 'a\u0000b' }, 'json.name'],
      ['POST', '/collections', '/collections', { slug: 'nul', name: 'Nul', allowed_roles: ['svc-\u0000'] }, 'json.allowed_roles.0'],
      ['PATCH', '/collections/handbook', '/collections/{slug}', { description: '\u0000' }, 'json.description'],
      [
        'POST',
        '/collections/handbook/answer',
        '/collections/{slug}/answer',
        { question: 'leave', session_id: 's\u0000' },
        'json.session_id',
      ],
    ];
    for (const [method, path, template, body, location] of cases) {
      const res = await h.app.request(path, { ...postJson(body, ids(who.admin)), method });
      expect(res.status, `${method} ${path}`).toBe(400);
      const problem = (await expectConforms(doc, method, template, res)) as { errors: { location: string; message: string }[] };
      expect(problem.errors).toEqual([{ location, message: 'must not contain a NUL character (U+0000)' }]);
    }
    const listed = await h.json('GET', '/collections', who.admin);
    expect(listed.body.collections.map((c: { slug: string }) => c.slug)).not.toContain('nul');
  });

  it('a JSON operation sent another media type is a 415 that says what to send, as documented', async () => {
    const res = await h.app.request('/collections/handbook/query', {
      method: 'POST',
      headers: { ...ids(who.analyst), 'Content-Type': 'text/plain' },
      body: 'how many days of leave',
    });
    expect(res.status).toBe(415);
    const body = (await expectConforms(doc, 'POST', '/collections/{slug}/query', res)) as { detail: string };
    expect(body.detail).toContain('Content-Type (text/plain)');
    expect(body.detail).toContain('application/json');
  });

  it("GET /docs is Scalar's reference of the document, from this origin, under the strict CSP and a style nonce", () =>
    expectDocsPage(h.app, doc));
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
