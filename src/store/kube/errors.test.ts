import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Conflict, Gone, Invalid, NotFound, TooManyRequests, Unavailable } from '../../api/errors.ts';
import { fieldPath, fromKube, isNetworkError } from './errors.ts';

describe('fieldPath', () => {
  it('splits dotted paths and indexes', () => {
    expect(fieldPath('spec.plugins[0].source')).toEqual(['spec', 'plugins', 0, 'source']);
    expect(fieldPath('metadata.labels[app.kubernetes.io/name]')).toEqual(['metadata', 'labels', 'app.kubernetes.io/name']);
    expect(fieldPath('metadata.name')).toEqual(['metadata', 'name']);
  });
});

describe('fromKube', () => {
  const status = (code: number, extra: object = {}): ApiException<string> =>
    new ApiException(code, 'x', JSON.stringify({ kind: 'Status', code, message: `m${code}`, ...extra }), {});

  it('maps status codes to domain errors', () => {
    expect(fromKube(status(404), 'get')).toBeInstanceOf(NotFound);
    expect(fromKube(status(409), 'create')).toBeInstanceOf(Conflict);
    expect(fromKube(status(410), 'watch')).toBeInstanceOf(Gone);
    expect(fromKube(status(503), 'get')).toBeInstanceOf(Unavailable);
    const tmr = fromKube(status(429, { details: { retryAfterSeconds: 7 } }), 'get') as TooManyRequests;
    expect(tmr.retryAfterSeconds).toBe(7);
  });

  it('turns 422 causes into validation issues', () => {
    const err = fromKube(
      status(422, { details: { causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.image' }] } }),
      'create',
    ) as Invalid;
    expect(err).toBeInstanceOf(Invalid);
    expect(err.detail).toEqual([{ loc: ['spec', 'image'], msg: 'Required value', type: 'missing' }]);
  });

  it('recognizes transport failures and leaves other errors alone', () => {
    const net = new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    expect(isNetworkError(net)).toBe(true);
    expect(fromKube(net, 'get')).toBeInstanceOf(Unavailable);
    const bug = new TypeError('x is undefined');
    expect(fromKube(bug, 'get')).toBe(bug);
  });
});
