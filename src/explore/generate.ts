import { forbidden, unprocessable } from '../platform/errors.ts';
import type { ChatMessage, ChatModel } from '../platform/gateway/index.ts';
import type { CatalogEntry } from './catalog.ts';
import { planQuestion } from './planner.ts';
import type { Turn } from './store.ts';

// Step 4: a SQL statement for the question, from the language model (system prompt with the allowed tables'
// schema and the last turns of the session) or, with no model configured, from the offline planner.
export type Generated = { sql: string; intent: string; model: string };

export function systemPrompt(tables: readonly CatalogEntry[]): string {
  const schema = tables
    .map((t) => `- ${t.fqn}(${t.columns.map((c) => `${c.name} ${c.type}`).join(', ')})${t.description ? ` -- ${t.description}` : ''}`)
    .join('\n');
  return [
    'You translate a question into exactly one read-only SQL query for Trino.',
    'Use only the tables listed below, with fully qualified names. Never write data or change anything.',
    'Answer with the SQL in a ```sql code block, preceded by one line saying what you understood.',
    '',
    'Tables:',
    schema,
  ].join('\n');
}

export function historyMessages(turns: readonly Turn[]): ChatMessage[] {
  return turns.flatMap((t): ChatMessage[] => [
    { role: 'user', content: t.question },
    { role: 'assistant', content: `${t.summary}\n\`\`\`sql\n${t.sql}\n\`\`\`` },
  ]);
}

/** The SQL of an answer: a ```sql block, else any code block, else the text from its first SELECT or WITH. */
export function sqlFromAnswer(answer: string): string | undefined {
  const fenced = /```sql\s*\n?([\s\S]*?)```/i.exec(answer) ?? /```\s*\n?([\s\S]*?)```/.exec(answer);
  if (fenced) return fenced[1]!.trim() || undefined;
  const start = answer.search(/\b(SELECT|WITH)\b/i);
  return start >= 0 ? answer.slice(start).trim() : undefined;
}

export async function generateSql(input: {
  chat: ChatModel | undefined;
  model: string;
  question: string;
  tables: readonly CatalogEntry[];
  history: readonly Turn[];
  /** Tables the question names that the policy does not open to the caller (step 3): a plan that needs one is 403. */
  refused?: readonly string[];
}): Promise<Generated> {
  if (!input.chat) {
    const plan = planQuestion(input.question, input.tables);
    // what the planner could not answer from the open tables may be what a closed one holds: say that, not "a model".
    // A closed table whose name an open one shares (tpch.sf1.customer beside tpch.tiny.customer) is no such reason.
    const openNames = new Set(input.tables.map((t) => t.name));
    const refused = (input.refused ?? []).filter((fqn) => !openNames.has(fqn.split('.').at(-1)!));
    if ((!plan || 'refusal' in plan) && refused.length > 0) throw forbidden(closedTables(refused));
    if (plan && 'refusal' in plan) {
      throw unprocessable(
        `The offline planner cannot answer this question exactly: ${plan.refusal}. Rephrase it, write the SQL in the editor, or set SVC_LLM_URL to an OpenAI-compatible gateway.`,
      );
    }
    if (!plan) {
      throw unprocessable(
        'The offline planner answers counts, counts or measures per dimension or per year, quarter, month, week or day, top N by a measure and equality filters; this question needs a language model: set SVC_LLM_URL to an OpenAI-compatible gateway, or write the SQL in the editor.',
      );
    }
    return { sql: plan.sql, intent: plan.intent, model: input.model };
  }
  const answer = await input.chat.complete({
    model: input.model,
    temperature: 0,
    messages: [
      { role: 'system', content: systemPrompt(input.tables) },
      ...historyMessages(input.history),
      { role: 'user', content: input.question },
    ],
  });
  const sql = sqlFromAnswer(answer.content);
  if (!sql) throw unprocessable('The language model answered without a SQL statement; rephrase the question.');
  const intent =
    answer.content
      .split('\n')
      .find((l) => l.trim() && !l.startsWith('```'))
      ?.trim() ?? '';
  return { sql, intent: intent.startsWith('SELECT') || intent.startsWith('WITH') ? '' : intent, model: input.model };
}

/** Tables for a refusal: at most three by name, then how many more. */
export const tableList = (tables: readonly string[]): string =>
  tables.length > 3 ? `${tables.slice(0, 3).join(', ')} and ${tables.length - 3} more` : tables.join(', ');

/** The 403 of a question whose tables the policy closes to the caller, naming them. */
const closedTables = (tables: readonly string[]): string =>
  `This question needs ${tableList(tables)}, which ${tables.length === 1 ? 'is' : 'are'} not open to you; ask an administrator for access.`;
