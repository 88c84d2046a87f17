import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/** The access key s3rver knows (it checks only that the key id exists, not the signature). */
export const S3_KEY = 'S3RVER';
export const S3_SECRET = 'S3RVER';

/** A real S3-compatible server (s3rver, in a child process) on 127.0.0.1 with a random port, a temp dir and one bucket. */
export interface LocalS3 {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  bucket: string;
  /** An independent client (the official AWS SDK) to put objects and read back what Tributary wrote. */
  client: S3Client;
  keys(prefix?: string): Promise<string[]>;
  get(key: string): Promise<Buffer>;
  put(key: string, body: string | Buffer): Promise<void>;
  close(): Promise<void>;
}

export async function startLocalS3(bucket = 'bkt'): Promise<LocalS3> {
  const directory = await mkdtemp(join(tmpdir(), 'tributary-s3-'));
  const child = spawn(
    process.execPath,
    [new URL('./s3rver-child.mjs', import.meta.url).pathname, directory, bucket],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const { port } = JSON.parse(line) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY, secretAccessKey: S3_SECRET },
  });
  return {
    endpoint,
    bucket,
    client,
    async keys(prefix = '') {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const r = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const o of r.Contents ?? []) if (o.Key) out.push(o.Key);
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
      return out.sort();
    },
    async get(key) {
      const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(
        await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
      );
    },
    async put(key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async close() {
      client.destroy();
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
