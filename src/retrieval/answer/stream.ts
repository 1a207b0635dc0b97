import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { problemResponse, type AppEnv } from '../../platform/http.ts';
import { retrievalProblem } from '../errors.ts';
import type { Answers, Prepared } from './index.ts';

// An answer as Server-Sent Events: `retrieval` (the chunks given as context), `delta` (text, markers checked),
// `citations`, then `done`; a failure after the first event is an `error` event carrying the problem, never a cut
// connection. A client that goes away cancels the model call.
export function streamAnswer(c: Context<AppEnv>, answers: Answers, prepared: Prepared): Response {
  return streamSSE(c, async (stream) => {
    const cancel = new AbortController();
    stream.onAbort(() => cancel.abort());
    c.req.raw.signal.addEventListener('abort', () => cancel.abort(), { once: true });
    // events are told synchronously as the answer is made; their writes go out one after another, in order
    let sent = Promise.resolve();
    const send = (event: string, data: unknown) => {
      sent = sent.then(() => stream.writeSSE({ event, data: JSON.stringify(data) }));
    };
    try {
      const answer = await answers.finish(prepared, {
        signal: cancel.signal,
        events: { retrieval: (chunks) => send('retrieval', { chunks }), delta: (text) => send('delta', { text }) },
      });
      send('citations', { citations: answer.citations });
      const { grounded, model, session_id, audit_id, standalone_question, latency_ms, usage } = answer;
      send('done', { grounded, model, session_id, audit_id, standalone_question, latency_ms, usage });
    } catch (err) {
      if (cancel.signal.aborted) return;
      const problem = problemResponse(retrievalProblem(err) ?? err, c);
      send('error', JSON.parse(await problem.text()));
    }
    await sent;
  });
}

/** `stream: true`, or a client that accepts only an event stream. */
export const wantsStream = (c: Context<AppEnv>, stream: boolean | undefined): boolean =>
  stream ?? (c.req.header('accept') ?? '').includes('text/event-stream');
