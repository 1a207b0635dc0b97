// Ingestion against LangChain (issue 36): svc's upload (extract, chunk, embed, store) through its HTTP app against the
// pipeline most teams write first: a langchain-community PDF loader, RecursiveCharacterTextSplitter at svc's chunk
// size and overlap (in words), langchain-postgres' PGVector on the same Postgres (a fresh database for the run), and
// a deterministic embedding of the same dimension on both sides (svc's offline embedder, LangChain's
// DeterministicFakeEmbedding), so neither waits on a model. The peer is bench/retrieval/langchain_ingest.py in the
// venv of bench/retrieval/langchain-venv.sh (PyPI, pinned), one child process kept warm and driven over stdin.
//   (a) ten-page documents one after another, in blocks of ten, svc's block then LangChain's, so a busy machine
//       slows both alike; unpdf's bare extraction of the same files beside them, for information
//   (b) a folder of mixed PDFs (1 to 40 pages), each side's folder path: svc's is its console's, which sends the files
//       dropped into it three uploads in flight (the goal's row); LangChain's DirectoryLoader loads the folder, the
//       splitter splits it, PGVector stores it in one add_documents. Each twice, svc's runs around the peers' (the peers
//       the second time in reverse order), so a load that changes during a folder slows every side alike; svc's files
//       uploaded one after another, twice among them, are printed for information
// Pages per second are the pages of the documents over the time each side's pipeline took (the peer's measured in
// its own process: interpreter start and imports excluded). Then each side's stored chunks are checked: svc's
// against its upload's chunk count and its chunker's chunks of the written words, LangChain's against the count and
// texts its splitter made.
// The peer runs once per loader, each in its own process and collections: PyPDFLoader (pypdf, pure Python) is the one
// LangChain's PDF guide and RAG tutorial start from, so the goal's ratio is to it; PyPDFium2Loader (PDFium, native) is
// the faster one a team may pick instead, printed beside it.
// Run: [SVC_RAG_PDF_WORKERS=n] npx tsx bench/retrieval/langchain.ts [--docs 60] [--folder 200] [--warm 30]
//        [--loaders pypdf,pypdfium2]
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { extractText, getDocumentProxy } from 'unpdf';
import { openPostgres } from '../../src/platform/db/index.ts';
import { freshDatabase } from '../../tests/support/pg.ts';
import { who } from '../../tests/support/retrieval.ts';
import { DIM } from './datasets.ts';
import { uploadHarness } from './upload-harness.ts';
import { checkLangChainStored, checkSvcStored, mixedDoc, pageCount, tenPageDoc, type BenchDoc } from './langchain-docs.ts';
import { time } from './questions.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const DOCS = Number(arg('docs', '60'));
const FOLDER = Number(arg('folder', '200'));
const WARM = Number(arg('warm', '30'));
const LOADERS = arg('loaders', 'pypdf,pypdfium2').split(',');
const LOADER_NAMES: Record<string, string> = { pypdf: 'PyPDFLoader', pypdfium2: 'PyPDFium2Loader' };
const BLOCK = 10;
/** The width of the rows' labels. */
const LABEL = 56;
/** How svc's console sends a folder's dropped files (src/retrieval/console/upload.js UPLOADS_IN_FLIGHT). */
const UPLOADS_IN_FLIGHT = 3;

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
type Stages = { load: number; split: number; store: number };
type PeerAnswer = { seconds: number; pages: number; stages: Stages; chunks: number; digest: string };

/** The Python peer as a child process: one JSON command a line in, one JSON answer a line out. */
function startPeer(python: string, loader: string, dsn: string, chunking: { size: number; overlap: number }) {
  const child = spawn(
    python,
    [
      here('./langchain_ingest.py'),
      ...['--dsn', dsn, '--loader', loader, '--dim', String(DIM)],
      ...['--chunk-size', String(chunking.size), '--chunk-overlap', String(chunking.overlap)],
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `the LangChain peer exited (${code ?? signal})`;
  });
  return {
    async ask(cmd: Record<string, unknown>): Promise<PeerAnswer> {
      if (exited) throw new Error(exited);
      child.stdin.write(`${JSON.stringify(cmd)}\n`);
      const next = await answers.next();
      if (next.done) throw new Error(exited ?? 'the LangChain peer closed its output');
      return JSON.parse(next.value) as PeerAnswer;
    },
    close: () => {
      child.stdin.end();
      return new Promise<void>((resolve) => (exited ? resolve() : child.on('exit', () => resolve())));
    },
  };
}

async function writeDocs(dir: string, prefix: string, docs: BenchDoc[]): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const paths = docs.map((_, i) => join(dir, `${prefix}${String(i).padStart(4, '0')}.pdf`));
  await Promise.all(docs.map((d, i) => writeFile(paths[i]!, d.bytes)));
  return paths;
}

async function main() {
  execFileSync('bash', [here('../../scripts/start-postgres.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const python = execFileSync('bash', [here('./langchain-venv.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const loadBefore = loadavg()[0]!;
  const fresh = await freshDatabase('bench_langchain');
  const db = openPostgres(fresh.cfg);
  const folder = await mkdtemp(join(await realpath(tmpdir()), 'svc-bench-langchain-'));
  try {
    const h = await uploadHarness(db);
    const { CHUNK_SIZE_TOKENS: size, CHUNK_OVERLAP_TOKENS: overlap, CHUNK_MAX_CHARS: maxChars } = h.deps.config;
    const { user, password, host, port, database } = fresh.cfg;
    const dsn = `postgresql+psycopg://${user}:${password}@${host}:${port}/${database}`;
    const peers = LOADERS.map((loader) => ({
      loader,
      process: startPeer(python, loader, dsn, { size, overlap }),
      ten: { ms: 0, stages: { load: 0, split: 0, store: 0 } as Stages, last: undefined as PeerAnswer | undefined },
      mixed: [] as PeerAnswer[],
    }));
    const uploaded: { documentId: string; chunkCount: number; doc: BenchDoc }[] = [];
    const upload = async (slug: string, name: string, doc: BenchDoc, keep = true) => {
      const r = await h.upload(slug, who.engineer, { name, type: 'application/pdf', bytes: doc.bytes });
      if (r.status !== 201) throw new Error(JSON.stringify(r.body));
      if (keep) uploaded.push({ documentId: r.body.document_id, chunkCount: r.body.chunk_count, doc });
    };
    for (const slug of ['warm', 'ten', 'mixed', 'mixed2', 'flight', 'flight2'])
      await h.json('POST', '/collections', who.engineer, { slug, name: slug, allowed_roles: [] });

    // every side warm: pdf.js compiled in svc's workers, the pool's connections open; each peer's loader, splitter
    // and PGVector's engine imported and connected
    const warm = Array.from({ length: WARM }, (_, d) => tenPageDoc(10_000 + d));
    const warmPaths = await writeDocs(join(folder, 'warm'), 'w', warm);
    for (const [i, doc] of warm.entries()) await upload('warm', `w${i}.pdf`, doc, false);
    for (const peer of peers) await peer.process.ask({ op: 'each', collection: `warm_${peer.loader}`, files: warmPaths });
    const bare = async (bytes: Uint8Array) => extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: false });
    for (const doc of warm) await bare(doc.bytes);

    // (a) ten-page documents one after another, a block of ten on each side in turn
    const ten = Array.from({ length: DOCS }, (_, d) => tenPageDoc(d));
    const tenPaths = await writeDocs(join(folder, 'ten'), 't', ten);
    let svcTen = 0;
    let unpdfTen = 0;
    for (let start = 0; start < ten.length; start += BLOCK) {
      for (let i = start; i < Math.min(start + BLOCK, ten.length); i++)
        svcTen += (await time(() => upload('ten', `t${i}.pdf`, ten[i]!)))[0];
      for (const peer of peers) {
        const answer = await peer.process.ask({
          op: 'each',
          collection: `ten_${peer.loader}`,
          files: tenPaths.slice(start, start + BLOCK),
        });
        peer.ten.ms += answer.seconds * 1000;
        for (const k of ['load', 'split', 'store'] as const) peer.ten.stages[k] += answer.stages[k];
        peer.ten.last = answer;
      }
      for (const doc of ten.slice(start, start + BLOCK)) unpdfTen += (await time(() => bare(doc.bytes)))[0];
    }

    // (b) a folder of mixed documents. svc takes a folder as its users give it one, dropped into the console, which
    // sends three uploads in flight (src/retrieval/console/upload.js); LangChain as its users do, DirectoryLoader and
    // one add_documents. Each side twice, in an order that is the same read from either end (svc three in flight, svc
    // one after another, the peers, the peers in reverse, svc one after another, svc three in flight), so a load that
    // changes steadily while the folders are read slows every side alike. svc's files go into collections of their
    // own, each time as new files; its one-after-another uploads are printed for information.
    const mixed = Array.from({ length: FOLDER }, (_, d) => mixedDoc(d));
    const mixedDir = join(folder, 'mixed');
    await writeDocs(mixedDir, 'm', mixed);
    const newFiles = (newlines: number) =>
      mixed.map((doc) => ({ ...doc, bytes: Uint8Array.from([...doc.bytes, ...Array(newlines).fill(0x0a)]) }));
    const svcFolder = { inFlight: 0, oneByOne: 0, firstInFlight: 0, firstOneByOne: 0 };
    const oneByOne = async (slug: string, docs: BenchDoc[]) => {
      if (svcFolder.oneByOne === 0) svcFolder.firstOneByOne = uploaded.length;
      for (const [i, doc] of docs.entries()) svcFolder.oneByOne += (await time(() => upload(slug, `m${i}.pdf`, doc)))[0];
    };
    const inFlight = async (slug: string, docs: BenchDoc[]) => {
      if (svcFolder.inFlight === 0) svcFolder.firstInFlight = uploaded.length;
      const [ms] = await time(async () => {
        let next = 0;
        const lane = async () => {
          for (let i = next++; i < docs.length; i = next++) await upload(slug, `f${i}.pdf`, docs[i]!);
        };
        await Promise.all(Array.from({ length: UPLOADS_IN_FLIGHT }, lane));
      });
      svcFolder.inFlight += ms;
    };
    const peerFolder = async (round: number, order: typeof peers) => {
      for (const peer of order)
        peer.mixed.push(await peer.process.ask({ op: 'folder', collection: `mixed${round}_${peer.loader}`, dir: mixedDir }));
    };
    await inFlight('flight', mixed);
    await oneByOne('mixed', newFiles(1));
    await peerFolder(1, peers);
    await peerFolder(2, [...peers].reverse());
    await oneByOne('mixed2', newFiles(2));
    await inFlight('flight2', newFiles(3));
    for (const peer of peers) await peer.process.close();
    await h.close();

    // what each side stored is what it made
    const tenPages = pageCount(ten);
    const mixedPages = pageCount(mixed);
    const svcChunks = await checkSvcStored(db, uploaded, { size, overlap, maxChars });
    const chunksOf = (from: number, to: number) => uploaded.slice(from, to).reduce((s, u) => s + u.chunkCount, 0);
    if (svcChunks !== chunksOf(0, uploaded.length)) throw new Error('svc stored other chunks than its uploads said');
    const peerChunks: { ten: number; mixed: number; mixed2: number }[] = [];
    for (const peer of peers) {
      for (const answer of peer.mixed)
        if (answer.pages !== mixedPages) throw new Error(`${peer.loader} loaded ${answer.pages} pages of the folder's ${mixedPages}`);
      peerChunks.push({
        ten: DOCS > 0 ? await checkLangChainStored(db, `ten_${peer.loader}`, peer.ten.last!) : 0,
        mixed: await checkLangChainStored(db, `mixed1_${peer.loader}`, peer.mixed[0]!),
        mixed2: await checkLangChainStored(db, `mixed2_${peer.loader}`, peer.mixed[1]!),
      });
    }

    const rate = (pages: number, ms: number) => pages / (ms / 1000);
    const cell = (x: number, width: number) => x.toFixed(0).padStart(width);
    const row = (label: string, pages: number, svcMs: number, peerMs: number[], chunks: string) =>
      `${label.padEnd(LABEL)} | ${cell(rate(pages, svcMs), 5)} | ${peers
        .map(
          (p, i) =>
            `${cell(rate(pages, peerMs[i]!), LOADER_NAMES[p.loader]!.length)} | ${`${(peerMs[i]! / svcMs).toFixed(2)}x`.padStart(6)}`,
        )
        .join(' | ')} | ${chunks}`;
    console.log(
      `\nload average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, on ${availableParallelism()} cores; ` +
        `svc reads PDF text on ${h.deps.config.RAG_PDF_WORKERS || 'no'} worker threads; LangChain: RecursiveCharacterTextSplitter ` +
        `${size} words, overlap ${overlap}, PGVector; embeddings ${DIM}-d, deterministic on both sides`,
    );
    console.log(`\ningestion, pages per second (goal: svc >= 3x LangChain); ratio = svc's pages/s over the loader's`);
    console.log(
      `${'documents'.padEnd(LABEL)} |   svc | ${peers.map((p) => `${LOADER_NAMES[p.loader]} |  ratio`).join(' | ')} | chunks stored (svc; ${LOADERS.join(', ')}), checked`,
    );
    console.log(
      row(
        `${DOCS} ten-page PDFs one after another`,
        tenPages,
        svcTen,
        peers.map((p) => p.ten.ms),
        `${chunksOf(0, DOCS)}; ${peerChunks.map((c) => c.ten).join(', ')}`,
      ),
    );
    const folderRow = (how: string, ms: number, first: number) =>
      row(
        `folder of ${FOLDER} mixed PDFs (${mixedPages} pages) x2, ${how}`,
        2 * mixedPages,
        ms,
        peers.map((p) => (p.mixed[0]!.seconds + p.mixed[1]!.seconds) * 1000),
        `${chunksOf(first, first + FOLDER)}; ${peerChunks.map((c) => c.mixed).join(', ')}`,
      );
    console.log(folderRow(`${UPLOADS_IN_FLIGHT} in flight`, svcFolder.inFlight, svcFolder.firstInFlight));
    console.log(`${folderRow('one by one', svcFolder.oneByOne, svcFolder.firstOneByOne)} (for information)`);
    const sumStages = (all: Stages[]) =>
      all.reduce((t, s) => ({ load: t.load + s.load, split: t.split + s.split, store: t.store + s.store }), {
        load: 0,
        split: 0,
        store: 0,
      });
    const share = (s: Stages) =>
      (['load', 'split', 'store'] as const).map((k) => `${k} ${((100 * s[k]) / (s.load + s.split + s.store)).toFixed(0)} %`).join(', ');
    for (const p of peers)
      console.log(
        `${LOADER_NAMES[p.loader]}'s pipeline: ten-page ${share(p.ten.stages)}; folder ${share(sumStages(p.mixed.map((a) => a.stages)))}`,
      );
    console.log(
      `for information: unpdf's bare text extraction of the ten-page PDFs ${rate(tenPages, unpdfTen).toFixed(0)} pages/s ` +
        `(svc / unpdf ${(unpdfTen / svcTen).toFixed(2)})`,
    );
  } finally {
    await db.close();
    await fresh.drop();
    await rm(folder, { recursive: true, force: true });
  }
}

await main();
