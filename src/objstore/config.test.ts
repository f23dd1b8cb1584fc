import { describe, expect, it } from 'vitest';
import { objectStoreFromEnv, ObjectStoreConfigError } from './config.ts';

describe('objectStoreFromEnv', () => {
  it('defaults to a directory in the data dir', () => {
    const s = objectStoreFromEnv({}, '/data');
    expect([s.kind, s.location]).toEqual(['filesystem', '/data/objects']);
    expect(objectStoreFromEnv({ AGENTYARD_OBJECT_STORE_DIR: '/mnt/objects' }, '/data').location).toBe('/mnt/objects');
  });

  it('builds an S3 store, naming endpoint and bucket but never the credentials', () => {
    const s = objectStoreFromEnv({ AGENTYARD_OBJECT_STORE: 's3', AGENTYARD_S3_BUCKET: 'convs', AGENTYARD_S3_ENDPOINT: 'http://objects:8333', AGENTYARD_S3_ACCESS_KEY_ID: 'id', AGENTYARD_S3_SECRET_ACCESS_KEY: 'very-secret' }, '/data');
    expect([s.kind, s.location]).toEqual(['s3', 's3://convs at http://objects:8333']);
    expect(JSON.stringify(s)).not.toContain('very-secret');
  });

  it.each([
    [{ AGENTYARD_OBJECT_STORE: 'gcs' }, /AGENTYARD_OBJECT_STORE must be filesystem or s3/],
    [{ AGENTYARD_OBJECT_STORE: 's3' }, /needs AGENTYARD_S3_BUCKET/],
    [{ AGENTYARD_OBJECT_STORE: 's3', AGENTYARD_S3_BUCKET: 'b', AGENTYARD_S3_ENDPOINT: 'objects:8333' }, /AGENTYARD_S3_ENDPOINT must be an http\(s\) URL/],
    [{ AGENTYARD_OBJECT_STORE: 's3', AGENTYARD_S3_BUCKET: 'b', AGENTYARD_S3_ACCESS_KEY_ID: 'id' }, /set together or not at all/],
    [{ AGENTYARD_OBJECT_STORE: 's3', AGENTYARD_S3_BUCKET: 'b', AGENTYARD_S3_FORCE_PATH_STYLE: 'yes' }, /AGENTYARD_S3_FORCE_PATH_STYLE must be true or false/],
  ])('refuses %j at start', (env, message) => {
    expect(() => objectStoreFromEnv(env, '/data')).toThrow(ObjectStoreConfigError);
    expect(() => objectStoreFromEnv(env, '/data')).toThrow(message);
  });
});
