import { afterAll } from 'vitest';
import { searchEnv } from '../support/opensearch.ts';
import { openFreshPostgres } from '../support/pg.ts';
import { retrievalAnswerContract } from '../support/retrieval-answer-contract.ts';
import { retrievalAnswerSessionContract } from '../support/retrieval-answer-session-contract.ts';
import { retrievalContract } from '../support/retrieval-contract.ts';
import { retrievalHostileContract } from '../support/retrieval-hostile-contract.ts';
import { retrievalHybridContract } from '../support/retrieval-hybrid-contract.ts';
import { retrievalIngestContract } from '../support/retrieval-ingest-contract.ts';
import { retrievalLibraryContract } from '../support/retrieval-library-contract.ts';
import { retrievalUploadContract } from '../support/retrieval-upload-contract.ts';
import { retrievalWatchContract } from '../support/retrieval-watch-contract.ts';
import { harnessDefaults } from '../support/retrieval.ts';
import { folderPlace } from '../support/watched-places.ts';

// The retrieval contracts with every collection on the search backend (SVC_RAG_DEFAULT_BACKEND=search): chunks
// indexed in the integration OpenSearch, keyword ranking by its BM25 and dense ranking by its k-NN. The memory runs of
// the same contracts are in retrieval-postgres.test.ts; what differs on this backend is named in docs/retrieval.md.
// The formats contract is not repeated here: extraction (and its OCR, minutes of CPU) is the same on every backend.
const search = await searchEnv();
harnessDefaults({ ...search.env, SVC_RAG_DEFAULT_BACKEND: 'search' });
// the contracts leave their collections (and so their indexes) in place: this file's indexes go at its end
afterAll(() => search.dropIndexes());

retrievalContract('search backend', () => openFreshPostgres('search'));
retrievalHybridContract('search backend', () => openFreshPostgres('search_hybrid'));
retrievalHostileContract('search backend', () => openFreshPostgres('search_hostile'));
retrievalIngestContract('search backend', () => openFreshPostgres('search_ingest'));
retrievalLibraryContract('search backend', () => openFreshPostgres('search_library'));
retrievalAnswerContract('search backend', () => openFreshPostgres('search_answer'));
retrievalAnswerSessionContract('search backend', () => openFreshPostgres('search_answer_session'));
retrievalUploadContract('search backend', () => openFreshPostgres('search_upload'));
retrievalWatchContract('folder, search backend', () => openFreshPostgres('search_watch'), folderPlace);
