// How this folder's worker threads (build-worker.mjs, split-worker.mjs), plain JavaScript so that they start the same
// under Node, tsx and vitest, load the TypeScript they run: through the loader the process was started with (bin/svc
// and tsx give it to every thread), Node itself where it strips types, and otherwise (vitest on Node 20) tsx's API.

/** The module at `url` (a .ts file), imported as the thread's loader allows. */
export async function importTypeScript(url) {
  try {
    return await import(url);
  } catch (error) {
    if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
    const { tsImport } = await import('tsx/esm/api');
    return tsImport(url, import.meta.url);
  }
}
