// S3ObjectStore: objects in an S3-compatible bucket through the AWS SDK v3 client (the maintained,
// complete S3 client; signing, paging and errors are its job, not ours). Checksums only where S3
// requires them: third-party servers (SeaweedFS, older MinIO) do not all accept the SDK's default
// trailing checksums. The SDK's own retries are off — ours (retry.ts) wrap every call, so a
// streamed file can be re-opened for each attempt and the final error is one clear sentence.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Unavailable } from '../api/errors.ts';
import { checkKey, checkPrefix } from './keys.ts';
import { describe, withRetries, type RetryPolicy } from './retry.ts';
import type { ObjectStore, StoredObject } from './types.ts';

export interface S3Settings {
  bucket: string;
  /** An S3-compatible endpoint (http://seaweedfs:8333); unset: AWS for `region`. */
  endpoint?: string;
  region?: string;
  /** Path-style URLs (endpoint/bucket/key): what non-AWS servers need. Default: true with an endpoint. */
  forcePathStyle?: boolean;
  /** Unset: the SDK's default chain (AWS_* variables, web identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Create the bucket when it is missing (the bundled store). Default true. */
  createBucket?: boolean;
  retry?: RetryPolicy;
}

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_SOCKET']);

function status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** Unreachable, timed out, throttled or a 5xx: worth another attempt. */
export function isTransient(err: unknown): boolean {
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  if (TRANSIENT_CODES.has(e.code ?? '') || TRANSIENT_CODES.has(e.cause?.code ?? '')) return true;
  if (e.name === 'TimeoutError' || e.name === 'RequestTimeout' || e.name === 'SlowDown' || e.name === 'ServiceUnavailable') return true;
  const s = status(err);
  return s !== undefined && (s >= 500 || s === 429 || s === 408);
}

const isNotFound = (err: unknown) => status(err) === 404 || (err as { name?: string }).name === 'NoSuchKey' || (err as { name?: string }).name === 'NotFound';

export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly #s: S3Settings;
  readonly #client: S3Client;

  constructor(s: S3Settings) {
    this.#s = s;
    const config: S3ClientConfig = {
      region: s.region ?? 'us-east-1',
      forcePathStyle: s.forcePathStyle ?? Boolean(s.endpoint),
      maxAttempts: 1,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A connection that does not open in 5 s is down; a slow upload is not (idle limit only).
      requestHandler: { connectionTimeout: 5000, requestTimeout: 120_000 },
      ...(s.endpoint ? { endpoint: s.endpoint } : {}),
      ...(s.credentials ? { credentials: s.credentials } : {}),
    };
    this.#client = new S3Client(config);
  }

  get location(): string {
    return `s3://${this.#s.bucket}${this.#s.endpoint ? ` at ${this.#s.endpoint}` : ''}`;
  }

  /** Every call: retried while transient; anything else becomes one clear Unavailable. */
  async #call<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await withRetries(`${what} (${this.location})`, this.#s.retry ?? {}, isTransient, op);
    } catch (err) {
      if (err instanceof Unavailable) throw err;
      const s = status(err);
      const why = s === 403 ? 'access denied: check the object store credentials and the bucket policy' : s === 404 ? 'no such bucket' : describe(err);
      throw new Unavailable(`${what} (${this.location}): ${why}`, { cause: err });
    }
  }

  async init(): Promise<void> {
    const Bucket = this.#s.bucket;
    await this.#call(`checking bucket ${Bucket}`, async () => {
      try {
        await this.#client.send(new HeadBucketCommand({ Bucket }));
      } catch (err) {
        if (status(err) !== 404 || this.#s.createBucket === false) throw err;
        try {
          await this.#client.send(new CreateBucketCommand({ Bucket }));
        } catch (createErr) {
          // Another replica created it between our look and our create.
          if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes((createErr as { name?: string }).name ?? '')) throw createErr;
        }
      }
    });
  }

  async put(key: string, body: Uint8Array | string): Promise<void> {
    const Key = checkKey(key);
    await this.#call(`storing ${Key}`, () => this.#client.send(new PutObjectCommand({ Bucket: this.#s.bucket, Key, Body: body })));
  }

  async putFile(key: string, path: string): Promise<void> {
    const Key = checkKey(key);
    const { size } = await stat(path);
    // A fresh stream per attempt: one a failed attempt consumed cannot be sent again.
    await this.#call(`storing ${Key}`, () => this.#client.send(new PutObjectCommand({ Bucket: this.#s.bucket, Key, Body: createReadStream(path), ContentLength: size })));
  }

  async get(key: string): Promise<Buffer | undefined> {
    const Key = checkKey(key);
    return this.#call(`reading ${Key}`, async () => {
      try {
        const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#s.bucket, Key }));
        return Buffer.from(await out.Body!.transformToByteArray());
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
  }

  async open(key: string): Promise<Readable | undefined> {
    const Key = checkKey(key);
    return this.#call(`reading ${Key}`, async () => {
      try {
        const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#s.bucket, Key }));
        return out.Body as Readable;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await this.#call(`listing ${prefix}`, () => this.#client.send(new ListObjectsV2Command({ Bucket: this.#s.bucket, Prefix: prefix, ...(ContinuationToken ? { ContinuationToken } : {}) })));
      for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, size: o.Size ?? 0 });
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    const Key = checkKey(key);
    await this.#call(`deleting ${Key}`, async () => {
      try {
        await this.#client.send(new DeleteObjectCommand({ Bucket: this.#s.bucket, Key }));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    });
  }

  async deletePrefix(prefix: string): Promise<number> {
    const objects = await this.list(checkPrefix(prefix));
    for (let i = 0; i < objects.length; i += 1000) {
      const Objects = objects.slice(i, i + 1000).map((o) => ({ Key: o.key }));
      const out = await this.#call(`deleting ${prefix}`, () => this.#client.send(new DeleteObjectsCommand({ Bucket: this.#s.bucket, Delete: { Objects, Quiet: true } })));
      if (out.Errors?.length) throw new Unavailable(`deleting ${prefix} (${this.location}): ${out.Errors.length} objects were not deleted (${out.Errors[0]?.Code ?? 'error'})`);
    }
    return objects.length;
  }

  /**
   * A URL that can PUT this one key, and nothing else, until it expires: what a Pod without the
   * store's credentials (the workspace archive Pod in the sandbox namespace) uploads to. Signed
   * locally: no request is made.
   */
  presignPut(key: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.#client, new PutObjectCommand({ Bucket: this.#s.bucket, Key: checkKey(key) }), { expiresIn: expiresInSeconds });
  }

  close(): void {
    this.#client.destroy();
  }
}
