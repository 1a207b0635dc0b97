import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFolderStore } from '../../src/platform/objects/index.ts';
import { retrievalOriginalsContract } from '../support/retrieval-originals-contract.ts';

// Originals in the embedded default: a folder (the integration suite runs the same contract on MinIO).
retrievalOriginalsContract('folder', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-originals-test-'));
  return { store: createFolderStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});
