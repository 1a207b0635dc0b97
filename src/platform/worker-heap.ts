// The young generation (V8's nursery) of svc's own worker threads. Unbounded, V8 sizes it from the machine's memory:
// on a machine of 16 GB or more a thread may grow it to two semi-spaces of 32 MB and keep them, since an idle thread
// never gives them back (the PGlite worker held 95 MB of heap after its start, 27 MB of it in use). The workers
// allocate in small pieces (a statement's rows, a page's text), which a nursery of 8 MB semi-spaces collects as well.
// `svc dev` (`npm start`, `bin/svc dev`) gives its main thread the same bound (--max-semi-space-size=8); this holds
// for the workers however the process was started (tests, `svc serve`, the image).
export const WORKER_RESOURCE_LIMITS = Object.freeze({ maxYoungGenerationSizeMb: 24 });

// A PDF worker allocates a page at a time and keeps nothing between documents: alone in a process, reading twelve
// documents, its heap stood at 26 MB with 2 MB semi-spaces where 8 MB ones left 38 MB, and 300-page documents read as
// fast (within the noise of a loaded 2-core machine, three runs each, 11-29). In svc dev, right after the bench's
// eight documents, it read 34 MB either way. The same bound on the PGlite worker did not move its 45 MB after start.
export const PDF_WORKER_LIMITS = Object.freeze({ maxYoungGenerationSizeMb: 6 });
