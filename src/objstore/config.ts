// Which object store this process uses, from its environment (the chart sets these; `agentyard up`
// defaults to a directory in its data dir):
//   AGENTYARD_OBJECT_STORE            filesystem (default) | s3
//   AGENTYARD_OBJECT_STORE_DIR        filesystem: the directory (default <dataDir>/objects)
//   AGENTYARD_S3_BUCKET               s3: the bucket (required)
//   AGENTYARD_S3_ENDPOINT             s3: an S3-compatible endpoint URL; unset = AWS
//   AGENTYARD_S3_REGION               s3: default us-east-1
//   AGENTYARD_S3_FORCE_PATH_STYLE     s3: true|false; default true when an endpoint is set
//   AGENTYARD_S3_ACCESS_KEY_ID, AGENTYARD_S3_SECRET_ACCESS_KEY
//                                     s3: both or neither; neither = the AWS SDK's default chain
//   AGENTYARD_S3_CREATE_BUCKET        s3: create a missing bucket (default true)
// A wrong setting stops the process at start with the variable's name, not at the first upload.
import { join } from 'node:path';
import { FsObjectStore } from './fs-store.ts';
import { S3ObjectStore } from './s3-store.ts';
import type { ObjectStore } from './types.ts';

export class ObjectStoreConfigError extends Error {}

function bool(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ObjectStoreConfigError(`${name} must be true or false, not ${JSON.stringify(v)}`);
}

export function objectStoreFromEnv(env: NodeJS.ProcessEnv, dataDir: string): ObjectStore {
  const kind = env.AGENTYARD_OBJECT_STORE || 'filesystem';
  if (kind === 'filesystem') return new FsObjectStore(env.AGENTYARD_OBJECT_STORE_DIR || join(dataDir, 'objects'));
  if (kind !== 's3') throw new ObjectStoreConfigError(`AGENTYARD_OBJECT_STORE must be filesystem or s3, not ${JSON.stringify(kind)}`);
  const bucket = env.AGENTYARD_S3_BUCKET;
  if (!bucket) throw new ObjectStoreConfigError('AGENTYARD_OBJECT_STORE=s3 needs AGENTYARD_S3_BUCKET');
  const endpoint = env.AGENTYARD_S3_ENDPOINT || undefined;
  if (endpoint && !/^https?:\/\/[^/]+/.test(endpoint)) throw new ObjectStoreConfigError(`AGENTYARD_S3_ENDPOINT must be an http(s) URL, not ${JSON.stringify(endpoint)}`);
  const accessKeyId = env.AGENTYARD_S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.AGENTYARD_S3_SECRET_ACCESS_KEY || undefined;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new ObjectStoreConfigError('AGENTYARD_S3_ACCESS_KEY_ID and AGENTYARD_S3_SECRET_ACCESS_KEY are set together or not at all');
  }
  const forcePathStyle = bool(env, 'AGENTYARD_S3_FORCE_PATH_STYLE');
  const createBucket = bool(env, 'AGENTYARD_S3_CREATE_BUCKET');
  return new S3ObjectStore({
    bucket,
    ...(endpoint ? { endpoint } : {}),
    ...(env.AGENTYARD_S3_REGION ? { region: env.AGENTYARD_S3_REGION } : {}),
    ...(forcePathStyle !== undefined ? { forcePathStyle } : {}),
    ...(createBucket !== undefined ? { createBucket } : {}),
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  });
}
