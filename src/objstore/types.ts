// The object store: where conversation data that is a blob, not a row, lives — workspace archives,
// the files of a conversation's own directory (browser recordings) — so that it outlives the
// sandbox that produced it. Two implementations: FsObjectStore (a directory, the embedded default)
// and S3ObjectStore (any S3-compatible bucket: the chart's bundled SeaweedFS or an external one).
// Events (the transcript) stay in the app database: they are read by cursor and searched.
import type { Readable } from 'node:stream';

export interface StoredObject {
  key: string;
  size: number;
}

export interface ObjectStore {
  /** 'filesystem' or 's3', for logs and /health. */
  readonly kind: 'filesystem' | 's3';
  /** Where the objects are (a directory, or endpoint and bucket); never credentials. */
  readonly location: string;
  /** Creates what must exist (the directory, the bucket). Throws Unavailable when unreachable. */
  init(): Promise<void>;
  put(key: string, body: Uint8Array | string): Promise<void>;
  /** Stores a file, streamed (workspace archives can be large). */
  putFile(key: string, path: string): Promise<void>;
  /** The object's bytes, or undefined when there is none under that key. */
  get(key: string): Promise<Buffer | undefined>;
  /** A stream of the object's bytes, or undefined when there is none. */
  open(key: string): Promise<Readable | undefined>;
  /** Every object whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Idempotent: a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes every object under `prefix` (which must end with '/'); returns how many. */
  deletePrefix(prefix: string): Promise<number>;
}

export type { Readable };
