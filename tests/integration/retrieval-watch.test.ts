import { openFreshPostgres } from '../support/pg.ts';
import { retrievalWatchContract } from '../support/retrieval-watch-contract.ts';
import { folderPlace, s3Place } from '../support/watched-places.ts';

// Watched sources on real Postgres: a folder, and a prefix of a MinIO bucket read through the S3 adapter.
retrievalWatchContract('folder, Postgres', () => openFreshPostgres('watch_folder'), folderPlace);
retrievalWatchContract('MinIO prefix, Postgres', () => openFreshPostgres('watch_s3'), s3Place);
