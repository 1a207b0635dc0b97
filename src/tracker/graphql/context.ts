import type { TrackerDeps } from '../deps.ts';
import { type ExperimentJson, loadExperiments } from '../experiments/load.ts';
import { type ModelVersionJson, versionsOfRuns } from '../registry/load.ts';
import { experimentIdOf } from '../wire/rules.ts';

/** What one GraphQL request's resolvers share: the tracker's dependencies and the request's loaders. */
export type GraphqlContext = {
  deps: TrackerDeps;
  /** A run's experiment, loaded with those of every other run in the answer. */
  experiment(id: string): Promise<ExperimentJson | undefined>;
  /** The versions registered from a run, loaded with those of every other run in the answer. */
  versionsOfRun(runId: string): Promise<ModelVersionJson[]>;
};

/**
 * A loader that gathers the keys asked for in one turn of the event loop (graphql-js resolves a list's items in one
 * pass) and loads them with one call; a key asked for again, under another alias, is answered from the first call.
 * A page of 1 000 runs asking for their experiments and versions under ten aliases costs two loads, not 20 000.
 */
export function batched<K, V>(loadMany: (keys: K[]) => Promise<Map<K, V>>): (key: K) => Promise<V | undefined> {
  const answers = new Map<K, Promise<V | undefined>>();
  let waiting: K[] | undefined;
  let loaded: Promise<Map<K, V>> = Promise.resolve(new Map());
  return (key) => {
    const known = answers.get(key);
    if (known) return known;
    if (!waiting) {
      const keys: K[] = [];
      waiting = keys;
      loaded = new Promise((resolve) => setImmediate(resolve)).then(() => {
        waiting = undefined;
        return loadMany(keys);
      });
    }
    waiting.push(key);
    const answer = loaded.then((found) => found.get(key));
    answers.set(key, answer);
    return answer;
  };
}

export function graphqlContext(deps: TrackerDeps): GraphqlContext {
  const experiments = batched(async (ids: string[]) => {
    const found = await loadExperiments(
      deps.db,
      ids.map((id) => experimentIdOf(id)),
    );
    return new Map(found.map((e) => [e.experiment_id, e]));
  });
  const versions = batched((runIds: string[]) => versionsOfRuns(deps.db, runIds));
  return {
    deps,
    experiment: experiments,
    versionsOfRun: async (runId) => (await versions(runId)) ?? [],
  };
}
