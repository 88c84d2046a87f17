import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { err } from '../errors/tributary-error.ts';
import { RequestRateLimit } from './request-rate-limit.ts';
import type { S3Credentials } from './s3-credentials.ts';
import { bucketUrl, scrubSecrets } from './s3-engine-sql.ts';
import type { S3TableConfig } from './s3-table-settings.ts';
import { ENGINE_UPLOAD_DEFAULTS, type UploadLimits, uploadParts } from './s3-upload-limits.ts';

/** An object of a listing. */
export interface ListedObject {
  key: string;
  /** Changes when the object is rewritten (the mirror of bz2 reads compares it). */
  etag: string;
}

/**
 * The objects of one s3 table through the official AWS SDK, for what the engine cannot do itself
 * (bz2 objects: Tributary compresses and decompresses them). It addresses the store exactly as
 * the engine does: `endpoint` (path style, the bucket the last part of its path) or the region's
 * address of `bucket`; anonymous requests are not signed.
 */
export class S3ObjectClient {
  private readonly client: S3Client;
  readonly bucket: string;
  /** Key prefix the endpoint's path puts before every key (empty for most stores). */
  private readonly prefix: string;

  private readonly puts: RequestRateLimit;
  private readonly limits: UploadLimits;

  constructor(
    config: S3TableConfig,
    private readonly creds: S3Credentials | undefined,
    /** The s3_* limits of uploads (a client that writes; the engine's defaults without them). */
    writeLimits?: UploadLimits,
  ) {
    this.limits = writeLimits ?? ENGINE_UPLOAD_DEFAULTS;
    this.puts = new RequestRateLimit(this.limits.maxPutRps, this.limits.maxPutBurst);
    const url = new URL(bucketUrl(config));
    let endpoint: string | undefined;
    if (config.endpoint !== undefined) {
      const parts = url.pathname.split('/').filter(Boolean);
      if (!parts.length)
        throw err('EXTERNAL_TABLE_BAD_SETTING', {
          table: '',
          setting: 'endpoint',
          detail: 'names no bucket (http://host:port/bucket)',
        });
      this.bucket = parts[0] as string;
      this.prefix = parts
        .slice(1)
        .map((p) => `${decodeURIComponent(p)}/`)
        .join('');
      endpoint = url.origin;
    } else {
      this.bucket = config.bucket as string;
      this.prefix = '';
    }
    this.client = new S3Client({
      region: config.region ?? 'us-east-1',
      ...(endpoint !== undefined ? { endpoint, forcePathStyle: true } : {}),
      // A writing client retries as s3_max_unexpected_write_error_retries says.
      maxAttempts: writeLimits ? writeLimits.maxUnexpectedWriteErrorRetries + 1 : 3,
      // No aws-chunked trailers (stores such as s3rver and older MinIO do not take them).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(creds
        ? {
            credentials: {
              accessKeyId: creds.accessKeyId,
              secretAccessKey: creds.secretAccessKey,
              ...(creds.sessionToken ? { sessionToken: creds.sessionToken } : {}),
            },
          }
        : { signer: { sign: async (request) => request } }),
    });
  }

  /**
   * Upload the file `path` as object `key`: one PUT up to s3_max_single_part_upload_size, else a
   * multipart upload in parts of s3_min_upload_part_size (growing by the multiply factor), aborted
   * if a part fails; with s3_check_objects_after_upload, the object's size is checked after.
   */
  async putFile(key: string, path: string): Promise<void> {
    const { size } = await stat(path);
    const parts = uploadParts(size, this.limits);
    const Key = this.prefix + key;
    if (parts.length === 1) {
      await this.puts.take();
      await this.call(`PUT ${key}`, () =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key,
            Body: createReadStream(path),
            ContentLength: size,
          }),
        ),
      );
    } else {
      await this.puts.take();
      const created = await this.call(`PUT ${key} (multipart)`, () =>
        this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key })),
      );
      const UploadId = created.UploadId as string;
      try {
        const done: { ETag: string; PartNumber: number }[] = [];
        for (const [i, part] of parts.entries()) {
          await this.puts.take();
          const r = await this.call(`PUT ${key} (part ${i + 1} of ${parts.length})`, () =>
            this.client.send(
              new UploadPartCommand({
                Bucket: this.bucket,
                Key,
                UploadId,
                PartNumber: i + 1,
                Body: createReadStream(path, { start: part.start, end: part.end - 1 }),
                ContentLength: part.end - part.start,
              }),
            ),
          );
          done.push({ ETag: r.ETag as string, PartNumber: i + 1 });
        }
        await this.puts.take();
        await this.call(`PUT ${key} (completing ${parts.length} parts)`, () =>
          this.client.send(
            new CompleteMultipartUploadCommand({
              Bucket: this.bucket,
              Key,
              UploadId,
              MultipartUpload: { Parts: done },
            }),
          ),
        );
      } catch (e) {
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }))
          .catch(() => undefined);
        throw e;
      }
    }
    if (this.limits.checkObjectsAfterUpload) {
      const head = await this.call(`HEAD ${key}`, () =>
        this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key })),
      );
      if (head.ContentLength !== size)
        throw err('EXTERNAL_TABLE_OBJECT_STORE', {
          detail: `object ${key} in bucket ${this.bucket} has ${head.ContentLength} bytes after its upload of ${size} (s3_check_objects_after_upload)`,
        });
    }
  }

  /** Every object whose key starts with `prefix`. */
  async list(prefix: string): Promise<ListedObject[]> {
    const out: ListedObject[] = [];
    let token: string | undefined;
    do {
      const r = await this.call(`LIST ${prefix}`, () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + prefix,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const o of r.Contents ?? [])
        if (o.Key) out.push({ key: o.Key.slice(this.prefix.length), etag: o.ETag ?? '' });
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  /** The body of object `key`, as a stream. */
  async get(key: string): Promise<Readable> {
    const r = await this.call(`GET ${key}`, () =>
      this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })),
    );
    return r.Body as Readable;
  }

  close(): void {
    this.client.destroy();
  }

  private async call<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      const name = (e as Error).name;
      const message = scrubSecrets((e as Error).message, this.creds);
      throw err('EXTERNAL_TABLE_OBJECT_STORE', {
        detail: `${what} in bucket ${this.bucket}: ${name}${message && message !== name ? `: ${message}` : ''}`,
      });
    }
  }
}
