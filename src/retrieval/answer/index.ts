import { createOpenAiChat, GatewayError, type ChatMessage, type ChatModel, type ChatUsage } from '../../platform/gateway/index.ts';
import { notFound } from '../../platform/errors.ts';
import { inSpan, type RequestTrace, startRequestTrace, tracer } from '../../platform/tracing.ts';
import type { Caller } from '../../platform/identity.ts';
import type { SessionKey } from '../../platform/sessions/index.ts';
import { requireQueryable } from '../access.ts';
import type { RetrievalDeps } from '../deps.ts';
import { recordRetrieval, retrieveChunks, type ChunkResult, type Retrieved } from '../query.ts';
import type { DocumentFilter } from '../filter.ts';
import * as store from '../store.ts';
import type { AnswerRecord } from '../store.ts';
import { citationsOf, type Citation } from './citations.ts';
import { AnswerModelError } from './errors.ts';
import { MarkerFilter } from './markers.ts';
import { extractiveAnswer, OFFLINE_ANSWER_MODEL } from './offline.ts';
import { answerMessages } from './prompt.ts';
import { rememberTurn, sessionKey, standaloneQuestion, turnsOf } from './session.ts';

// An answer to a question over a collection: the retrieval /query makes (same policy, ranking and audit record),
// the chunks that are context numbered [1]..[k] for the chat model (or the offline extractive answer), the markers
// checked against what was given, and one audit record holding the answer, the model and its citations.

export type AnswerInput = {
  question: string;
  top_k?: number | undefined;
  session_id?: string | undefined;
  /** Narrows the documents the context is retrieved from, as on /query. */
  filter?: DocumentFilter | undefined;
};

export type AnswerResponse = {
  answer: string;
  citations: Citation[];
  /** The chunks given as context: marker n is chunks[n - 1]. */
  chunks: ChunkResult[];
  grounded: boolean;
  /** The model that answered; null when none was asked (no context). */
  model: string | null;
  session_id: string | null;
  /** The answer's audit record (GET /audit/queries), which its feedback names. */
  audit_id: number;
  /** The follow-up rewritten from the session's turns, as it was retrieved for; null when the question stood alone. */
  standalone_question: string | null;
  latency_ms: number;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
};

/** Told as the answer is made, for a stream: the context, then the text as it comes (markers already checked). */
export type AnswerEvents = { retrieval?(chunks: ChunkResult[]): void; delta?(text: string): void };

export const NO_CONTEXT_ANSWER = 'The collection holds nothing on this question: no passage is close enough to answer from.';

export type Answers = ReturnType<typeof createAnswers>;
type Ctx = { deps: RetrievalDeps; chat: ChatModel | undefined };

export function createAnswers(deps: RetrievalDeps) {
  const { config } = deps;
  const chat = config.CHAT_URL
    ? createOpenAiChat({
        baseURL: config.CHAT_URL,
        timeoutMs: config.CHAT_TIMEOUT_MS,
        ...(config.CHAT_API_KEY ? { apiKey: config.CHAT_API_KEY } : {}),
      })
    : undefined;
  if (!chat)
    deps.logger.warn('SVC_CHAT_URL is not set: answers are extractive (the sentences closest to the question), the offline fallback');
  const ctx: Ctx = { deps, chat };
  return {
    /** Everything that can refuse the request (validation, policy, limits): done before an answer starts. */
    prepare: async (caller: Caller, slug: string, input: AnswerInput, requestId: string): Promise<Prepared> => {
      // one trace from the question to the answer, which a streamed answer finishes after the handler returns
      const trace = startRequestTrace(
        spans,
        'retrieval.answer',
        { user: caller.user, requestId, sessionId: input.session_id },
        { collection: slug, question: input.question, top_k: input.top_k, session_id: input.session_id, filter: input.filter },
      );
      return { ...(await trace.run(() => prepareAnswer(ctx, caller, slug, input))), trace };
    },
    /** The answer itself; `events` follow it as it is made, `signal` cancels the model call. */
    finish: async (prepared: Prepared, opts: { events?: AnswerEvents; signal?: AbortSignal } = {}) => {
      const answer = await prepared.trace.run(() => finishAnswer(ctx, prepared, opts));
      prepared.trace.end(answerOutputs(answer));
      return answer;
    },
  };
}

export type Prepared = {
  caller: Caller;
  slug: string;
  input: AnswerInput;
  /** The question retrieved for and answered: the caller's, or the standalone rewrite of a follow-up. */
  question: string;
  session: SessionKey | undefined;
  started: number;
  retrieved: Retrieved;
  /** The chunks given as context, numbered from 1. */
  context: ChunkResult[];
  /** The request's trace, ended by `finish`. */
  trace: RequestTrace;
};

const spans = tracer('retrieval');
const answerOutputs = (a: AnswerResponse) => ({
  answer: a.answer,
  citations: a.citations.map((c) => ({ marker: c.marker, chunk_id: c.chunk_id })),
  grounded: a.grounded,
  model: a.model,
  audit_id: a.audit_id,
  standalone_question: a.standalone_question,
});

async function prepareAnswer(ctx: Ctx, caller: Caller, slug: string, input: AnswerInput): Promise<Omit<Prepared, 'trace'>> {
  const { deps } = ctx;
  const started = performance.now();
  // an answer is charged once, before any model call; a refusal for lack of context asks no model and is not
  let charged = false;
  const charge = async () => {
    if (!charged) await deps.limiter.charge(caller, 'retrieval.answer');
    charged = true;
  };
  const session = input.session_id ? sessionKey(caller.user, input.session_id) : undefined;
  const turns = session ? await turnsOf(deps, session) : [];
  let question = input.question;
  if (turns.length > 0) {
    // the follow-up is read with the session before retrieval; the caller's access is checked before it costs anything
    const head = await store.collectionHead(deps.db, slug);
    if (!head) throw notFound(`Collection '${slug}' does not exist.`);
    await requireQueryable(deps, caller, head);
    if (ctx.chat) await charge();
    try {
      question = await inSpan(spans, 'retrieval.rewrite', () =>
        standaloneQuestion(ctx.chat, deps.config.CHAT_MODEL, turns, input.question),
      );
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      const latency_ms = Math.round((performance.now() - started) * 100) / 100;
      const answer: AnswerRecord = {
        outcome: 'model_failed',
        model: deps.config.CHAT_MODEL,
        text: null,
        citations: [],
        session_id: input.session_id ?? null,
        error: err.message,
      };
      await recordRetrieval(deps, caller, {
        collection: slug,
        question: input.question,
        top_k: input.top_k ?? deps.config.DEFAULT_TOP_K,
        filter: input.filter,
        chunks: [],
        latency_ms,
        answer,
      });
      deps.metrics.answerDuration.observe({ outcome: 'model_failed' }, latency_ms / 1000);
      throw new AnswerModelError(err);
    }
  }
  const retrieved = await retrieveChunks(deps, caller, slug, { question, top_k: input.top_k, filter: input.filter });
  const context = retrieved.chunks.filter((c) => isContext(c, retrieved, deps.config.ANSWER_MIN_SCORE));
  if (context.length > 0) await charge();
  return { caller, slug, input, question, session, started, retrieved, context };
}

async function finishAnswer(ctx: Ctx, p: Prepared, opts: { events?: AnswerEvents; signal?: AbortSignal }): Promise<AnswerResponse> {
  const { deps } = ctx;
  const { input, context } = p;
  const session_id = input.session_id ?? null;
  const standalone_question = p.question === input.question ? null : p.question;
  const elapsed = () => Math.round((performance.now() - p.started) * 100) / 100;
  const record = (answer: AnswerRecord) =>
    recordRetrieval(deps, p.caller, {
      collection: p.slug,
      question: input.question,
      top_k: p.retrieved.topK,
      filter: input.filter,
      chunks: p.retrieved.chunks,
      latency_ms: elapsed(),
      answer: { ...answer, ...(standalone_question ? { standalone_question } : {}) },
    });
  // the session remembers answers given, never a failed or cancelled one
  const remember = (answer: string, citations: Citation[] = []) =>
    p.session
      ? rememberTurn(deps, p.session, { question: input.question, standalone: p.question, answer, collection: p.slug, citations })
      : undefined;
  opts.events?.retrieval?.(context);

  if (context.length === 0) {
    deps.metrics.answerRefusals.inc({ reason: 'no_context' });
    opts.events?.delta?.(NO_CONTEXT_ANSWER);
    const audit_id = await record({ outcome: 'no_context', model: '', text: NO_CONTEXT_ANSWER, citations: [], session_id });
    await remember(NO_CONTEXT_ANSWER);
    deps.metrics.answerDuration.observe({ outcome: 'no_context' }, elapsed() / 1000);
    return {
      answer: NO_CONTEXT_ANSWER,
      citations: [],
      chunks: [],
      grounded: false,
      model: null,
      session_id,
      audit_id,
      standalone_question,
      latency_ms: elapsed(),
      usage: null,
    };
  }

  const filter = new MarkerFilter(context.length);
  let text = '';
  const emit = (piece: string) => {
    if (!piece) return;
    text += piece;
    opts.events?.delta?.(piece);
  };
  let generated: { model: string; usage?: ChatUsage };
  try {
    generated = await inSpan(spans, 'retrieval.generate', () =>
      generate(ctx, p.question, context, (raw) => emit(filter.push(raw)), { streamed: !!opts.events?.delta, signal: opts.signal }),
    );
    emit(filter.end());
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    // a caller who left cancelled the call: recorded as such, and nothing more is said to anyone
    const outcome = opts.signal?.aborted ? 'cancelled' : 'model_failed';
    deps.metrics.answerDuration.observe({ outcome }, elapsed() / 1000);
    await record({ outcome, model: deps.config.CHAT_MODEL, text: null, citations: [], session_id, error: err.message });
    throw new AnswerModelError(err);
  }
  if (filter.invented > 0) deps.metrics.inventedCitations.inc(filter.invented);
  const usage = generated.usage
    ? { prompt_tokens: generated.usage.promptTokens, completion_tokens: generated.usage.completionTokens }
    : null;
  if (usage) {
    deps.metrics.answerTokens.inc({ kind: 'prompt' }, usage.prompt_tokens);
    deps.metrics.answerTokens.inc({ kind: 'completion' }, usage.completion_tokens);
  }
  const citations = citationsOf(text, filter.used, context, p.question);
  const audit_id = await record({
    outcome: 'answered',
    model: generated.model,
    text,
    citations: citations.map((c) => ({ marker: c.marker, chunk_id: c.chunk_id })),
    session_id,
    ...(usage ? { usage } : {}),
  });
  await remember(text, citations);
  deps.metrics.answerDuration.observe({ outcome: 'answered' }, elapsed() / 1000);
  return {
    answer: text,
    citations,
    chunks: context,
    grounded: true,
    model: generated.model,
    session_id,
    audit_id,
    standalone_question,
    latency_ms: elapsed(),
    usage,
  };
}

/**
 * A chunk is context when its cosine similarity reaches SVC_ANSWER_MIN_SCORE or it holds a term of the question
 * (the keyword ranking found it): a fused score says how chunks rank, not whether any of them is on the question.
 */
function isContext(chunk: ChunkResult, retrieved: Retrieved, minScore: number): boolean {
  return chunk.keyword_rank !== null || (retrieved.similarity.get(chunk.chunk_id) ?? -Infinity) >= minScore;
}

/** The answer's raw text, told piece by piece to `onText`: from the chat model, or extractive when there is none. */
async function generate(
  ctx: Ctx,
  question: string,
  context: readonly ChunkResult[],
  onText: (raw: string) => void,
  how: { streamed: boolean; signal?: AbortSignal | undefined },
): Promise<{ model: string; usage?: ChatUsage }> {
  if (!ctx.chat) {
    onText(extractiveAnswer(question, context));
    return { model: OFFLINE_ANSWER_MODEL };
  }
  const messages: ChatMessage[] = answerMessages(question, context);
  const req = { model: ctx.deps.config.CHAT_MODEL, messages, temperature: 0, ...(how.signal ? { signal: how.signal } : {}) };
  const res = how.streamed ? await ctx.chat.stream(req, onText) : await ctx.chat.complete(req);
  if (!how.streamed) onText(res.content);
  return { model: res.model, ...(res.usage ? { usage: res.usage } : {}) };
}
