import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';

// 8 MiB parts: above S3's 5 MiB minimum, and the most one upload holds in memory. 10 000 parts -> 80 GB at most.
export const PART_SIZE = 8 * 1024 * 1024;

type Target = { sdk: typeof import('@aws-sdk/client-s3'); client: S3Client; bucket: string; key: string; contentType?: string };

// A stream of unknown length cannot go in one PutObject (S3 needs Content-Length up front). Reads it a part at a
// time: a body shorter than one part becomes one PutObject, a longer one a multipart upload, aborted on any
// failure so no orphan parts stay behind. Memory stays at one part whatever the body's size.
export async function uploadUnknownLength(t: Target, body: Readable): Promise<{ size: number }> {
  const { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, PutObjectCommand, UploadPartCommand } =
    t.sdk;
  const parts = readParts(body);
  const first = await parts.next();
  const firstPart = first.done ? Buffer.alloc(0) : first.value;
  if (firstPart.length < PART_SIZE) {
    await t.client.send(
      new PutObjectCommand({ Bucket: t.bucket, Key: t.key, Body: firstPart, ContentLength: firstPart.length, ContentType: t.contentType }),
    );
    return { size: firstPart.length };
  }

  const { UploadId } = await t.client.send(new CreateMultipartUploadCommand({ Bucket: t.bucket, Key: t.key, ContentType: t.contentType }));
  const done: { ETag: string | undefined; PartNumber: number }[] = [];
  let size = 0;
  try {
    let part: Buffer | undefined = firstPart;
    for (let n = 1; part; n++) {
      const res = await t.client.send(
        new UploadPartCommand({ Bucket: t.bucket, Key: t.key, UploadId, PartNumber: n, Body: part, ContentLength: part.length }),
      );
      done.push({ ETag: res.ETag, PartNumber: n });
      size += part.length;
      const next = await parts.next();
      part = next.done ? undefined : next.value;
    }
    await t.client.send(new CompleteMultipartUploadCommand({ Bucket: t.bucket, Key: t.key, UploadId, MultipartUpload: { Parts: done } }));
    return { size };
  } catch (err) {
    body.destroy();
    await t.client.send(new AbortMultipartUploadCommand({ Bucket: t.bucket, Key: t.key, UploadId })).catch(() => {});
    throw err;
  }
}

// Yields buffers of at least PART_SIZE bytes (the last may be shorter), one at a time.
async function* readParts(body: Readable): AsyncGenerator<Buffer> {
  let chunks: Buffer[] = [];
  let held = 0;
  let yielded = false;
  for await (const chunk of body) {
    const buf: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    chunks.push(buf);
    held += buf.length;
    if (held >= PART_SIZE) {
      yield Buffer.concat(chunks, held);
      yielded = true;
      chunks = [];
      held = 0;
    }
  }
  // The remainder, or one empty buffer for an empty body; never an empty trailing part.
  if (held > 0 || !yielded) yield Buffer.concat(chunks, held);
}
