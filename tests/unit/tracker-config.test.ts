import { describe, expect, it } from 'vitest';
import { loadTrackerConfig } from '../../src/tracker/config.ts';

describe('tracker settings', () => {
  it('defaults: no root (the data folder is used), no S3 settings, migration at start decided by the database, 8 MiB bodies', () => {
    expect(loadTrackerConfig({})).toEqual({ artifactRoot: undefined, s3: {}, migrateAtStart: undefined, maxJsonBytes: 8 * 1024 * 1024 });
  });

  it('takes the specification names first, then MLflow and AWS names', () => {
    const env = {
      TRACKER_ARTIFACT_ROOT: 's3://bucket/prefix',
      TRACKER_S3_ENDPOINT_URL: 'http://minio:9000',
      MLFLOW_S3_ENDPOINT_URL: 'http://other:9000',
      OBJSTORE_ACCESS_KEY_ID: 'id',
      OBJSTORE_SECRET_ACCESS_KEY: 'secret',
      AWS_ACCESS_KEY_ID: 'aws-id',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
    };
    expect(loadTrackerConfig(env)).toMatchObject({
      artifactRoot: 's3://bucket/prefix',
      s3: { endpoint: 'http://minio:9000', accessKeyId: 'id', secretAccessKey: 'secret' },
    });
    expect(
      loadTrackerConfig({ MLFLOW_S3_ENDPOINT_URL: 'http://other:9000', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' }).s3,
    ).toEqual({
      endpoint: 'http://other:9000',
      accessKeyId: 'a',
      secretAccessKey: 'b',
    });
  });

  it('never mixes the two credential pairs', () => {
    expect(loadTrackerConfig({ OBJSTORE_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'aws-secret' }).s3).toEqual({ accessKeyId: 'id' });
  });

  it.each([
    ['true', true],
    ['false', false],
    ['0', false],
    ['', undefined],
  ])('TRACKER_MIGRATE_AT_START=%j is %s', (value, expected) => {
    expect(loadTrackerConfig({ TRACKER_MIGRATE_AT_START: value }).migrateAtStart).toBe(expected);
  });

  it('refuses a flag that is not true or false, naming the variable', () => {
    expect(() => loadTrackerConfig({ SVC_TRACKER_MIGRATE_AT_START: 'maybe' })).toThrow(/SVC_TRACKER_MIGRATE_AT_START/);
  });
});
