import { type AnyValue, anyValueFromJson, anyValueOf, type Attribute } from './otlp.ts';

// Spans from OpenTelemetry instrumentations name their kind, inputs, outputs, model and token counts in their own
// semantic conventions (OpenInference, OpenTelemetry GenAI, Traceloop). MLflow translates them on ingest into its own
// attributes, which its client, UI and trace info read (span_type, inputs, outputs, token usage). svc does the same,
// for the same three conventions in the same order of precedence: the first convention that has a value wins, and
// an attribute the span already carries is never replaced (except a span type of UNKNOWN).

export const SPAN_TYPE = 'mlflow.spanType';
export const SPAN_INPUTS = 'mlflow.spanInputs';
export const SPAN_OUTPUTS = 'mlflow.spanOutputs';
export const CHAT_USAGE = 'mlflow.chat.tokenUsage';
const MODEL = 'mlflow.llm.model';
const MODEL_PROVIDER = 'mlflow.llm.provider';

/** An attribute key, or a pattern for numbered ones (gen_ai.prompt.0.content). */
type KeyOrPattern = string | RegExp;

type Convention = {
  kindKey: string;
  kinds: Record<string, string>;
  inputTokens: string;
  outputTokens: string;
  totalTokens?: string;
  cacheReadTokens?: string[];
  cacheCreationTokens?: string[];
  inputs: KeyOrPattern[];
  outputs: KeyOrPattern[];
  model: string[];
  provider?: string;
};

const OPEN_INFERENCE: Convention = {
  kindKey: 'openinference.span.kind',
  kinds: {
    TOOL: 'TOOL',
    CHAIN: 'CHAIN',
    LLM: 'LLM',
    RETRIEVER: 'RETRIEVER',
    EMBEDDING: 'EMBEDDING',
    AGENT: 'AGENT',
    RERANKER: 'RERANKER',
    UNKNOWN: 'UNKNOWN',
    GUARDRAIL: 'GUARDRAIL',
    EVALUATOR: 'EVALUATOR',
  },
  inputTokens: 'llm.token_count.prompt',
  outputTokens: 'llm.token_count.completion',
  totalTokens: 'llm.token_count.total',
  cacheReadTokens: ['llm.token_count.prompt_details.cache_read'],
  cacheCreationTokens: ['llm.token_count.prompt_details.cache_write'],
  inputs: ['input.value'],
  outputs: ['output.value'],
  model: ['llm.response.model_name', 'llm.model_name', 'llm.request.model_name', 'embedding.model_name'],
  provider: 'llm.provider',
};

const GEN_AI: Convention = {
  kindKey: 'gen_ai.operation.name',
  kinds: {
    chat: 'CHAT_MODEL',
    create_agent: 'AGENT',
    embeddings: 'EMBEDDING',
    execute_tool: 'TOOL',
    generate_content: 'LLM',
    invoke_agent: 'AGENT',
    text_completion: 'LLM',
    response: 'LLM',
  },
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: ['gen_ai.usage.cache_read.input_tokens'],
  // the second is the name in the registry's earlier version
  cacheCreationTokens: ['gen_ai.usage.cache_write.input_tokens', 'gen_ai.usage.cache_creation.input_tokens'],
  inputs: ['gen_ai.input.messages', 'gen_ai.tool.call.arguments'],
  outputs: ['gen_ai.output.messages', 'gen_ai.tool.call.result'],
  model: ['gen_ai.response.model', 'gen_ai.request.model'],
  provider: 'gen_ai.provider.name',
};

const TRACELOOP: Convention = {
  kindKey: 'traceloop.span.kind',
  kinds: { workflow: 'WORKFLOW', task: 'TASK', agent: 'AGENT', tool: 'TOOL', unknown: 'UNKNOWN' },
  inputTokens: 'gen_ai.usage.prompt_tokens',
  outputTokens: 'gen_ai.usage.completion_tokens',
  totalTokens: 'llm.usage.total_tokens',
  inputs: ['traceloop.entity.input', /^gen_ai\.prompt\.\d+\.content/, /^gen_ai\.completion\.\d+\.tool_calls\.\d+\.arguments/],
  outputs: ['traceloop.entity.output', /^gen_ai\.completion\.\d+\.content/],
  model: [],
  provider: 'gen_ai.system',
};

const CONVENTIONS = [OPEN_INFERENCE, GEN_AI, TRACELOOP];

type Attributes = Map<string, AnyValue>;

/** A value counts when it holds something: MLflow passes over an empty string, list or object, and null. */
function present(v: AnyValue | undefined): AnyValue | undefined {
  if (!v) return undefined;
  const value = anyValueOf(v);
  if (value === null || value === '' || value === 0 || value === false) return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value as object).length === 0) return undefined;
  return v;
}

function lookup(attrs: Attributes, keys: KeyOrPattern[]): AnyValue | undefined {
  for (const key of keys) {
    if (typeof key === 'string') {
      const v = present(attrs.get(key));
      if (v) return v;
      continue;
    }
    for (const [k, v] of attrs) if (key.test(k) && present(v)) return v;
  }
  return undefined;
}

/** A token count sent as an integer or as its decimal text. */
function count(v: AnyValue | undefined): number | undefined {
  const value = v ? anyValueOf(v) : undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value);
  return undefined;
}

const firstCount = (attrs: Attributes, keys: string[] | undefined) =>
  (keys ?? []).map((k) => count(attrs.get(k))).find((n) => n !== undefined);

function tokenUsage(attrs: Attributes): Record<string, number> | undefined {
  for (const c of CONVENTIONS) {
    const input = count(attrs.get(c.inputTokens));
    const output = count(attrs.get(c.outputTokens));
    const total =
      (c.totalTokens ? count(attrs.get(c.totalTokens)) : undefined) ??
      (input !== undefined && output !== undefined ? input + output : undefined);
    if (input === undefined && output === undefined && total === undefined) continue;
    const cacheRead = firstCount(attrs, c.cacheReadTokens);
    const cacheCreation = firstCount(attrs, c.cacheCreationTokens);
    return {
      ...(input !== undefined ? { input_tokens: input } : {}),
      ...(output !== undefined ? { output_tokens: output } : {}),
      ...(total !== undefined ? { total_tokens: total } : {}),
      ...(cacheRead !== undefined ? { cache_read_input_tokens: cacheRead } : {}),
      ...(cacheCreation !== undefined ? { cache_creation_input_tokens: cacheCreation } : {}),
    };
  }
  return undefined;
}

function spanType(attrs: Attributes): string | undefined {
  for (const c of CONVENTIONS) {
    const kind = anyValueOf(attrs.get(c.kindKey));
    const type = typeof kind === 'string' ? c.kinds[kind] : undefined;
    if (type) return type;
  }
  return undefined;
}

const firstOf = (attrs: Attributes, pick: (c: Convention) => KeyOrPattern[]) => {
  for (const c of CONVENTIONS) {
    const v = lookup(attrs, pick(c));
    if (v) return v;
  }
  return undefined;
};

/**
 * The span's attributes with MLflow's own added from whichever convention the span follows: span type, inputs,
 * outputs, token usage, model and provider. Attributes arrive with JSON text already unwrapped (spans-store).
 */
export function withMlflowAttributes(attributes: Attribute[]): Attribute[] {
  const attrs: Attributes = new Map(attributes.map((a) => [a.key, a.value]));
  const added: Attribute[] = [];
  const add = (key: string, value: AnyValue | undefined) => {
    if (value && !attrs.has(key)) added.push({ key, value });
  };
  const type = spanType(attrs);
  const current = anyValueOf(attrs.get(SPAN_TYPE));
  let kept = attributes;
  if (type && (current === null || current === 'UNKNOWN')) {
    kept = attributes.filter((a) => a.key !== SPAN_TYPE);
    added.push({ key: SPAN_TYPE, value: { stringValue: type } });
  }
  add(
    SPAN_INPUTS,
    firstOf(attrs, (c) => c.inputs),
  );
  add(
    SPAN_OUTPUTS,
    firstOf(attrs, (c) => c.outputs),
  );
  const usage = attrs.has(CHAT_USAGE) ? undefined : tokenUsage(attrs);
  add(CHAT_USAGE, usage && anyValueFromJson(usage));
  add(
    MODEL,
    firstOf(attrs, (c) => c.model),
  );
  add(
    MODEL_PROVIDER,
    firstOf(attrs, (c) => (c.provider ? [c.provider] : [])),
  );
  return added.length ? [...kept, ...added] : attributes;
}
