import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { openPglite, type Database } from '../../src/platform/db/index.ts';
import { startServer, type RunningServer } from '../../src/platform/http.ts';
import { ANSWER_ENV, coastPdf, FOG_SENTENCE, ledgerNote, sourcesOf } from '../support/answer-fixtures.ts';
import { retrievalHarness, who, type RetrievalHarness } from '../support/retrieval.ts';
import { startScriptedGateway, type ScriptedGateway } from '../support/scripted-gateway.ts';

// Streamed answers (Server-Sent Events) over a real socket, the real `openai` SDK streaming from a scripted server.
type Event = { event: string; data: any };

/** Events of an SSE body, as they arrive; `stop` (after an event) leaves the stream the way a client that goes away does. */
async function readEvents(res: Response, stop?: (e: Event) => boolean): Promise<Event[]> {
  const events: Event[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return events;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      events.push({ event, data: JSON.parse(data) });
      if (stop?.(events.at(-1)!)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

describe('streamed answers', () => {
  let db: Database;
  let gw: ScriptedGateway;
  let h: RetrievalHarness;
  let server: RunningServer;

  beforeAll(async () => {
    db = await openPglite({});
    gw = await startScriptedGateway({ models: ['svc-chat'] });
    h = await retrievalHarness(db, { env: { ...ANSWER_ENV, SVC_CHAT_URL: gw.url } });
    server = await startServer(h.app, 0, '127.0.0.1');
    await h.json('POST', '/collections', who.engineer, { slug: 'coast', name: 'Coast', allowed_roles: [] });
    await h.upload('coast', who.engineer, { name: 'coast.pdf', bytes: coastPdf(), type: 'application/pdf' });
    await h.upload('coast', who.engineer, { name: 'keepers.md', bytes: ledgerNote(), type: 'text/markdown' });
  });
  afterAll(async () => {
    await server?.close();
    await h?.close();
    await gw?.close();
    await db?.close();
  });
  beforeEach(() => {
    gw.requests.length = 0;
    gw.script.streamDelayMs = 0;
    gw.script.breakStreamAfter = undefined;
  });

  const post = (body: unknown, init: RequestInit = {}, as = who.engineer) =>
    fetch(`${server.url}/collections/coast/answer`, {
      method: 'POST',
      headers: {
        'X-User-Id': as.user,
        'X-User-Role': as.roles,
        'Content-Type': 'application/json',
        ...(init.headers as Record<string, string>),
      },
      body: JSON.stringify(body),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  const fogAnswer = (body: any) => {
    const fog = sourcesOf(body).find((s) => s.text.includes('thirty seconds'))!.n;
    return `The horn sounds every thirty seconds [${fog}]. It is loud [12].`;
  };

  it('sends retrieval, deltas, citations and done, in that order, with the answer checked as it streams', async () => {
    gw.script.chat = fogAnswer;
    const res = await post({ question: 'How often does the fog horn sound?', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEvents(res);
    const kinds = events.map((e) => e.event);
    expect(kinds[0]).toBe('retrieval');
    expect(kinds.slice(-2)).toEqual(['citations', 'done']);
    expect(new Set(kinds.slice(1, -2))).toEqual(new Set(['delta']));
    expect(kinds.length).toBeGreaterThan(5); // a delta per word, not one block
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.text)
      .join('');
    const chunks = events[0]!.data.chunks;
    const fog = chunks.findIndex((c: any) => c.text.includes('thirty seconds')) + 1;
    expect(text).toBe(`The horn sounds every thirty seconds [${fog}]. It is loud.`);
    const { citations } = events.at(-2)!.data;
    expect(citations).toEqual([expect.objectContaining({ marker: fog, chunk_id: chunks[fog - 1].chunk_id, page: 3, quote: FOG_SENTENCE })]);
    expect(events.at(-1)!.data).toMatchObject({
      grounded: true,
      model: 'svc-chat',
      usage: { prompt_tokens: 1, completion_tokens: expect.any(Number) },
    });
    // the upstream call was a stream
    expect(gw.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('streams when the client accepts only text/event-stream', async () => {
    gw.script.chat = fogAnswer;
    const res = await post({ question: 'How often does the fog horn sound?' }, { headers: { Accept: 'text/event-stream' } });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect((await readEvents(res)).at(-1)!.event).toBe('done');
  });

  it('refuses before the stream starts with problem+json', async () => {
    const res = await post({ question: 'fog', stream: true, top_k: 500 });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const refused = await post({ question: 'fog', stream: true }, {}, who.stranger);
    expect([403, 404]).toContain(refused.status);
  });

  it('reports a model failure after the start as an error event, not a cut connection', async () => {
    gw.script.chat = fogAnswer;
    gw.script.breakStreamAfter = 3;
    gw.script.streamDelayMs = 10;
    const res = await post({ question: 'How often does the fog horn sound?', stream: true });
    const events = await readEvents(res);
    // text had begun to flow when the upstream stream broke off
    const kinds = events.map((e) => e.event);
    expect(kinds[0]).toBe('retrieval');
    expect(kinds.slice(1, -1).length).toBeGreaterThan(0);
    expect(new Set(kinds.slice(1, -1))).toEqual(new Set(['delta']));
    expect('The horn sounds').toContain(
      events
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.text)
        .join(''),
    );
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ status: 502, title: 'Bad Gateway' });
    expect(last.data.detail).toMatch(/chat model failed/);
    const audit = await (
      await fetch(`${server.url}/audit/queries?limit=1`, { headers: { 'X-User-Id': who.engineer.user, 'X-User-Role': who.engineer.roles } })
    ).json();
    expect(audit.queries[0].answer).toMatchObject({ outcome: 'model_failed', text: null });
  });

  it('cancels the model call when the client goes away', async () => {
    gw.script.chat = () => Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ') + ' [1].';
    gw.script.streamDelayMs = 20;
    const res = await post({ question: 'How often does the fog horn sound?', stream: true });
    const events = await readEvents(res, (e) => e.event === 'delta' && e.data.text.includes('word2'));
    expect(events.at(-1)!.event).toBe('delta');
    // the scripted server sees its stream abandoned well before its 200 words are out
    await vi.waitFor(() => expect(gw.abandoned).toHaveLength(1), { timeout: 5000, interval: 20 });
    await vi.waitFor(
      async () => {
        const audit = await (
          await fetch(`${server.url}/audit/queries?limit=1`, {
            headers: { 'X-User-Id': who.engineer.user, 'X-User-Role': who.engineer.roles },
          })
        ).json();
        expect(audit.queries[0].answer).toMatchObject({ outcome: 'cancelled', text: null });
      },
      { timeout: 5000, interval: 50 },
    );
  });
});
