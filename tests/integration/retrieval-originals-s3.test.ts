import { createS3Store } from '../../src/platform/objects/index.ts';
import { retrievalOriginalsContract } from '../support/retrieval-originals-contract.ts';
import { createTestBucket, S3_TEST } from '../support/s3.ts';

// Originals on a real S3-compatible store (MinIO, scripts/start-s3.sh), under a prefix as a deployment keeps them.
retrievalOriginalsContract('MinIO', async () => {
  const { bucket, drop } = await createTestBucket('originals');
  return { store: createS3Store({ ...S3_TEST, bucket, prefix: 'retrieval' }), cleanup: drop };
});
