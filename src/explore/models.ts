import { badRequest } from '../platform/errors.ts';
import type { ChatModel, GatewayModel } from '../platform/gateway/index.ts';

// GET /models: the gateway's model list, memoised for 60 seconds so that providers added to the gateway show up
// within a minute. Without a gateway the offline planner is the only model.
export const OFFLINE_MODEL = 'offline-planner';
const MEMO_MS = 60_000;

export type ModelList = { default: string; models: string[]; details: GatewayModel[] };

export function createModelCatalog(chat: ChatModel | undefined, defaultModel: string, now: () => number = Date.now) {
  let memo: { at: number; list: Promise<ModelList> } | undefined;
  const load = async (): Promise<ModelList> => {
    if (!chat) return { default: OFFLINE_MODEL, models: [OFFLINE_MODEL], details: [{ id: OFFLINE_MODEL, owned_by: 'svc', offline: true }] };
    const details = await chat.listModels();
    return { default: defaultModel, models: details.map((m) => m.id), details };
  };
  const list = () => {
    if (!memo || now() - memo.at >= MEMO_MS) {
      const pending = load();
      memo = { at: now(), list: pending };
      pending.catch(() => (memo = undefined)); // a failed call is not remembered
    }
    return memo.list;
  };
  return {
    list,
    /** The model a query uses: the requested one if the gateway declares it, else the default. */
    async resolve(requested: string | undefined): Promise<string> {
      const models = await list();
      if (requested === undefined) return models.default;
      if (!models.models.includes(requested)) {
        throw badRequest(`Unknown LLM model '${requested}': choose one of ${models.models.join(', ')} (GET /models).`, {
          errors: [{ location: 'json.model', message: 'Unknown LLM model' }],
        });
      }
      return requested;
    },
  };
}

export type ModelCatalog = ReturnType<typeof createModelCatalog>;
