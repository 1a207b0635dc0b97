import { fileURLToPath } from 'node:url';

// The console's SQL editor is CodeMirror 6: many ES modules with bare imports, which a page under a CSP without
// inline scripts cannot map (no inline import map). esbuild bundles them into one module, in memory, on the first
// request for it (about 0.3 s on two busy cores, too long to add to every start); nothing is written or fetched.

const ENTRY = fileURLToPath(new URL('./vendor/codemirror.ts', import.meta.url));

export async function bundleEditor(): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    legalComments: 'eof',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
