import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../platform/http.ts';
import { uploadArtifact } from '../artifacts/files.ts';
import { joinKey } from '../artifacts/paths.ts';
import { requireStoreKey } from '../artifacts/store-keys.ts';
import type { TrackerDeps } from '../deps.ts';
import { invalidParameter } from '../errors.ts';
import { experimentIdOf } from '../wire/rules.ts';
import { int64, keyValue, list, optionalStr, strOrEmpty } from '../wire/fields.ts';
import { jsonText, pythonJson } from '../wire/json.ts';
import { readRequest } from '../wire/request.ts';
import { logBatch } from './data.ts';
import { runJsonText } from './load.ts';
import { checkedBatch, RUN_NAME_TAG } from './messages.ts';
import { createRun, ownedBy, updateRun } from './store.ts';
import { signedInUser } from '../signed-in.ts';

// MLflow UI's prompt engineering run (ajax runs/create-promptlab-run): one finished run holding the prompt, the
// model route and parameters as params, and the evaluation table as its artifact. svc has no AI gateway, so the
// run records what the UI evaluated; it does not save a servable prompt model beside it.

const params = () =>
  list(
    keyValue().extend({
      value: z
        .union([z.string(), z.number(), z.boolean()])
        .optional()
        .transform((v) => String(v ?? '')),
    }),
  );

const CreatePromptlabRun = z
  .object({
    experiment_id: optionalStr(),
    run_name: optionalStr(),
    tags: list(keyValue()),
    prompt_template: optionalStr(),
    prompt_parameters: z.array(z.unknown()).optional(),
    model_route: optionalStr(),
    model_parameters: params(),
    model_input: optionalStr(),
    model_output: strOrEmpty(),
    model_output_parameters: params(),
    mlflow_version: optionalStr(),
    user_id: optionalStr(),
    start_time: int64().optional(),
  })
  .transform((m) => {
    // MLflow's checks, in its order and words.
    const required = ['experiment_id', 'prompt_template', 'prompt_parameters', 'model_route', 'model_input', 'mlflow_version'] as const;
    for (const field of required) {
      const v = m[field];
      if (v === undefined || (Array.isArray(v) && v.length === 0))
        throw invalidParameter(`CreatePromptlabRun request must specify ${field}.`);
    }
    return { ...m, prompt_parameters: params().parse(m.prompt_parameters) };
  });

export function promptlabRoutes(deps: TrackerDeps): Hono<AppEnv> {
  const { db } = deps;
  return new Hono<AppEnv>().post('/runs/create-promptlab-run', async (c) => {
    const m = await readRequest(c, CreatePromptlabRun);
    const tags = m.tags.filter((t) => t.key !== RUN_NAME_TAG);
    const run = await createRun(
      db,
      ownedBy(
        {
          experimentId: experimentIdOf(m.experiment_id),
          userId: m.user_id ?? 'unknown',
          runName: m.run_name,
          startTime: m.start_time,
          tags,
        },
        signedInUser(c),
      ),
      deps.now(),
    );
    const runId = run.info.run_id;
    const batch = checkedBatch({
      metrics: [],
      params: [...m.model_parameters, { key: 'model_route', value: m.model_route! }, { key: 'prompt_template', value: m.prompt_template! }],
      tags: [
        { key: 'mlflow.loggedArtifacts', value: pythonJson([{ path: 'eval_results_table.json', type: 'table' }]) },
        { key: 'mlflow.runSourceType', value: 'PROMPT_ENGINEERING' },
      ],
    });
    await logBatch(db, runId, batch);
    const table = {
      columns: [...m.prompt_parameters.map((p) => p.key), 'prompt', 'output', ...m.model_output_parameters.map((p) => p.key)],
      data: [
        [...m.prompt_parameters.map((p) => p.value), m.model_input!, m.model_output, ...m.model_output_parameters.map((p) => p.value)],
      ],
    };
    const body = new TextEncoder().encode(pythonJson(table));
    await uploadArtifact(deps.artifacts, joinKey(requireStoreKey(deps, run.info.artifact_uri), 'eval_results_table.json'), body, {
      contentLength: body.byteLength,
      contentType: 'application/json',
    });
    await updateRun(db, runId, { status: 'FINISHED', endTime: deps.now(), runName: undefined });
    return jsonText(c, `{"run":${await runJsonText(db, runId)}}`);
  });
}
