import { copyFile, mkdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createWorker, type Worker } from 'tesseract.js';

// OCR with tesseract.js, offline: the language data comes from the @tesseract.js-data packages, gathered into
// one folder because tesseract.js reads every language from a single langPath. The worker starts on the first
// page that needs it, so a digital PDF never pays for OCR.
export interface OcrEngine {
  recognize(image: Uint8Array): Promise<string>;
  readonly started: boolean;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

async function gatherLanguages(langs: string[]): Promise<string> {
  const dir = join(tmpdir(), 'svc-tessdata');
  await mkdir(dir, { recursive: true });
  for (const lang of langs) {
    const target = join(dir, `${lang}.traineddata.gz`);
    if (await stat(target).catch(() => undefined)) continue;
    const pkg = dirname(require.resolve(`@tesseract.js-data/${lang}/package.json`));
    await copyFile(join(pkg, '4.0.0_best_int', `${lang}.traineddata.gz`), target);
  }
  return dir;
}

export function createOcrEngine(opts: { langs: string[] }): OcrEngine {
  let worker: Promise<Worker> | undefined;
  const start = async () => {
    const langPath = await gatherLanguages(opts.langs);
    return createWorker(opts.langs, 1, { langPath, gzip: true, cacheMethod: 'none', logger: () => {} });
  };
  return {
    get started() {
      return worker !== undefined;
    },
    async recognize(image) {
      worker ??= start();
      const { data } = await (await worker).recognize(Buffer.from(image));
      return data.text;
    },
    async close() {
      if (!worker) return;
      const w = worker;
      worker = undefined;
      await (await w).terminate();
    },
  };
}
