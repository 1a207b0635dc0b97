// The progress of `svc embed`: the whole import's (every shard's rows count), read from the database every half
// second and drawn as a bar on stderr by cli-progress, or as a line a part where no terminal watches (a Job's log).
import { SingleBar } from 'cli-progress';

type Progress = {
  rows_done: number;
  rows_total: number;
  parts: number;
  parts_done: number;
  rate_per_second: number | null;
  eta_seconds: number | null;
};

export function drawProgress(read: () => Promise<Progress>, opts: { bar: boolean; everyMs?: number }): { stop(): Promise<void> } {
  const bar = opts.bar
    ? new SingleBar({
        format: 'embedding {bar} {percentage}% | {value}/{total} rows | {rate} rows/s | ETA {eta_left} | parts {parts}',
        stream: process.stderr,
        hideCursor: true,
        // redrawn by this loop; the library's own ETA is replaced by the import's (every shard counts)
        noTTYOutput: true,
        notTTYSchedule: 2000,
      })
    : undefined;
  let lastParts = -1;
  const show = (p: Progress) => {
    const fields = {
      rate: p.rate_per_second ?? '-',
      eta_left: p.eta_seconds === null ? '-' : `${p.eta_seconds}s`,
      parts: `${p.parts_done}/${p.parts}`,
    };
    if (bar) {
      bar.setTotal(p.rows_total);
      bar.update(p.rows_done, fields);
    } else if (p.parts_done !== lastParts) {
      lastParts = p.parts_done;
      process.stderr.write(`${p.rows_done}/${p.rows_total} rows, ${fields.rate} rows/s, ETA ${fields.eta_left}, parts ${fields.parts}\n`);
    }
  };
  let started = false;
  const tick = async () => {
    const p = await read().catch(() => undefined);
    if (!p) return;
    if (bar && !started) {
      bar.start(p.rows_total, p.rows_done);
      started = true;
    }
    show(p);
  };
  void tick();
  const timer = setInterval(() => void tick(), opts.everyMs ?? 500);
  return {
    async stop() {
      clearInterval(timer);
      await tick();
      bar?.stop();
    },
  };
}
