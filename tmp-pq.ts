import { ensureTrino, trinoStatement, trinoToken } from './tests/support/trino.ts';
import { parquetWriteBuffer } from '/tmp/hpw/node_modules/hyparquet-writer/src/index.js';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
const { ca } = ensureTrino();
const tok = await trinoToken('svc-service');
const run = (s: string) => trinoStatement(s, tok, ca);
await run('CREATE SCHEMA IF NOT EXISTS iceberg.exp');
await run('DROP TABLE IF EXISTS iceberg.exp.p');
await run(`CREATE TABLE iceberg.exp.p (chunk_id varchar, page integer, seq bigint, embedding array(real), created timestamp(6) with time zone)`);
const loc = (await run(`SELECT value FROM iceberg.exp."p$properties" WHERE key = 'location'`)).rows;
const show = (await run(`SHOW CREATE TABLE iceberg.exp.p`)).rows[0][0] as string;
console.log(show);
const location = /location = '([^']+)'/.exec(show)![1];
const s3 = new S3Client({ endpoint: 'http://127.0.0.1:19000', region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'svcminio', secretAccessKey: 'svcminio-secret' } });
const dim = 64;
for (const n of [1000, 50000]) {
  const t0 = performance.now();
  const ids = Array.from({ length: n }, (_, i) => `k${n}-${i}`);
  const emb = Array.from({ length: n }, () => Array.from(new Float32Array(dim).map(() => Math.random() - 0.5)));
  const buf = parquetWriteBuffer({
    columnData: [
      { name: 'chunk_id', data: ids },
      { name: 'page', data: ids.map(() => 1) },
      { name: 'seq', data: ids.map((_, i) => BigInt(i)) },
      { name: 'embedding', data: emb },
      { name: 'created', data: ids.map(() => BigInt(Date.now() * 1000)) },
    ],
    schema: [
      { name: 'root', num_children: 5 },
      { name: 'chunk_id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'page', type: 'INT32', repetition_type: 'OPTIONAL' },
      { name: 'seq', type: 'INT64', repetition_type: 'OPTIONAL' },
      { name: 'embedding', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', type: 'FLOAT', repetition_type: 'OPTIONAL' },
      { name: 'created', type: 'INT64', repetition_type: 'OPTIONAL', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } },
    ],
  });
  const t1 = performance.now();
  const [, bucket, ...rest] = location.replace('s3://', '/').split('/');
  const key = `${rest.join('/')}/import/b${n}/part-0.parquet`;
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: new Uint8Array(buf) }));
  const t2 = performance.now();
  await run(`ALTER TABLE iceberg.exp.p EXECUTE add_files(location => '${location}/import/b${n}', format => 'PARQUET')`);
  const t3 = performance.now();
  console.log(n, 'write', (t1 - t0).toFixed(0), 'put', (t2 - t1).toFixed(0), 'add', (t3 - t2).toFixed(0), 'MB', (buf.byteLength / 1e6).toFixed(1));
}
console.log(JSON.stringify((await run(`SELECT count(*), max(seq), cardinality(max_by(embedding, seq)), max(created), max(chunk_id) FROM iceberg.exp.p`)).rows));
console.log(JSON.stringify((await run(`SELECT chunk_id, cosine_distance(embedding, ARRAY[${Array(64).fill('0.1').join(',')}]) d FROM iceberg.exp.p ORDER BY d LIMIT 2`)).rows));
