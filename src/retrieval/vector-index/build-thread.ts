import type { MessagePort } from 'node:worker_threads';
import { buildClusters } from './cluster-build.ts';
import type { Layout } from './clusters.ts';
import type { KernelModules } from './kernel.ts';
import { createRowStore, type RowBlock } from './rows.ts';

// The clusters' build on a thread of its own (build-worker.mjs loads this; background-build.ts is the other side):
// the rows arrive a block at a time, into a row store of the thread's own, and the answer is what the caller needs to
// move its own rows alike and serve the clusters: the order, and the layout (starts, centroids, radii).

export type BuildRequest = { modules: KernelModules; dim: number; count: number; relaxed?: boolean };
/** A block of rows (on a stage the caller writes again once told it was taken), or the word to build. */
export type BuildMessage = { block: RowBlock } | { build: true };
export type BuildAnswer =
  | { order: Int32Array<ArrayBuffer>; layout: Layout }
  | { useless: true; probeShare: number; neighboured: number }
  | { failed: string };

export function serve(port: MessagePort, request: BuildRequest): void {
  const { modules, dim, count } = request;
  const store = createRowStore(modules, dim, request.relaxed === false ? { relaxed: false } : {});
  store.reserve(count);
  port.on('message', (message: BuildMessage) => {
    try {
      if ('block' in message) {
        store.importRows(message.block);
        port.postMessage({ taken: true }); // the block's stage may be written again
        return;
      }
      const built = buildClusters(modules, store, dim, count);
      if ('useless' in built) {
        port.postMessage({ useless: true, probeShare: built.probeShare, neighboured: built.neighboured } satisfies BuildAnswer);
        return;
      }
      const { layout } = built;
      const order = built.order as Int32Array<ArrayBuffer>;
      const answer: BuildAnswer = { order, layout };
      port.postMessage(answer, [order.buffer, layout.starts.buffer, layout.centroids.buffer, layout.radius.buffer]);
    } catch (error) {
      port.postMessage({ failed: error instanceof Error ? error.message : String(error) } satisfies BuildAnswer);
    }
  });
}
