export type { ObjectStore, StoredObject } from './types.ts';
export { FsObjectStore } from './fs-store.ts';
export { S3ObjectStore, type S3Settings } from './s3-store.ts';
export { objectStoreFromEnv, ObjectStoreConfigError } from './config.ts';
export * from './keys.ts';
