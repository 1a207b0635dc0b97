// @ts-check
// One run: its facts, parameters, latest metrics, tags, note, artifacts and the traces made in it; its name, tags and
// note are edited here, and the run deleted or restored (run-edit.js).
import { api } from '../api.js';
import { h } from '../dom.js';
import { formatDuration, formatNumber, formatTime, quote, runName } from '../format.js';
import { keyValueTable, link, section, table } from '../parts.js';
import { hashFor } from '../router.js';
import { artifactBrowser } from './artifacts.js';
import { lifecycleButton, renameForm, runNote, runTags } from './run-edit.js';
import { tracesSection } from './traces.js';

/** @typedef {import('../dom.js').Child} Child */

/** @param {string} runId */
export async function runView(runId) {
  const { run } = await api('GET', 'runs/get', { run_id: runId });
  const experiment = await api('GET', 'experiments/get', { experiment_id: run.info.experiment_id }).then(
    (r) => r.experiment,
    () => null,
  );
  const info = run.info;
  const tags = run.data?.tags ?? [];
  const userTags = tags.filter((t) => !t.key.startsWith('mlflow.'));
  const systemTags = tags.filter((t) => t.key.startsWith('mlflow.'));
  const expName = experiment?.name ?? info.experiment_id;

  /** @type {[string, ...Child[]][]} */
  const factList = [
    ['Run ID', h('span', { class: 'mono' }, info.run_id)],
    ['Experiment', link(`#/experiments/${encodeURIComponent(info.experiment_id)}`, expName)],
    ['Status', info.status],
    ['Lifecycle', h('span', { id: 'lifecycle' }, info.lifecycle_stage), ' ', lifecycleButton(run)],
    ['User', info.user_id ?? ''],
    ['Started', formatTime(info.start_time)],
    ['Ended', formatTime(info.end_time)],
    ['Duration', formatDuration(info.start_time, info.end_time)],
    ['Artifact URI', h('span', { class: 'mono' }, info.artifact_uri ?? '')],
  ];
  const facts = h(
    'dl',
    { class: 'facts' },
    factList.map(([k, ...v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );

  const metrics = [...(run.data?.metrics ?? [])].sort((a, b) => a.key.localeCompare(b.key));
  const params = [...(run.data?.params ?? [])].sort((a, b) => a.key.localeCompare(b.key));
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      link('#/experiments', 'Experiments'),
      ' / ',
      link(`#/experiments/${encodeURIComponent(info.experiment_id)}`, expName),
      ' / ',
      runName(run),
    ),
    section(`Run ${runName(run)}`, renameForm(run), facts, h('p', {}, link(hashFor('/compare', { runs: info.run_id }), 'Metric charts'))),
    await runNote(run),
    h(
      'div',
      { class: 'grid2' },
      section('Parameters', keyValueTable(params, 'params', 'No parameters.')),
      section(
        'Metrics',
        metrics.length
          ? table(
              ['Name', 'Latest value', 'Step', 'Logged'],
              metrics.map((m) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, m.key),
                  h('td', { class: 'num', title: String(m.value) }, formatNumber(m.value)),
                  h('td', { class: 'num' }, m.step ?? 0),
                  h('td', {}, formatTime(m.timestamp)),
                ),
              ),
              { id: 'metrics', class: 'wide' },
            )
          : h('p', { class: 'muted' }, 'No metrics.'),
      ),
      h(
        'div',
        {},
        runTags(run, userTags),
        systemTags.length
          ? h('details', {}, h('summary', {}, `System tags (${systemTags.length})`), keyValueTable(systemTags, 'system-tags', ''))
          : null,
      ),
    ),
    await artifactBrowser(run),
    // traces the run made (mlflow.sourceRun) or that were linked to it (link_traces_to_run), as search_traces finds them
    await tracesSection([info.experiment_id], `run_id = ${quote(info.run_id)}`),
  );
}
