import { describe, expect, it } from 'vitest';
import { Invalid } from '../../api/errors.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { validateObject } from './validate.ts';

const ok: Sandbox = { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Sandbox', metadata: { name: 'a', namespace: 'n' }, spec: {} };

describe('validateObject', () => {
  it('accepts a valid object', () => {
    expect(() => validateObject(SandboxKind, ok)).not.toThrow();
  });

  it('reports one issue per offending field, at the field', () => {
    const bad = { ...ok, spec: { paused: 'no', extra: true } } as unknown as Sandbox;
    try {
      validateObject(SandboxKind, bad);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(Invalid);
      expect((err as Invalid).detail).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ loc: ['spec', 'paused'], type: 'type_error' }),
          expect.objectContaining({ loc: ['spec', 'extra'], type: 'extra_forbidden' }),
        ]),
      );
      expect((err as Invalid).detail.filter((i) => i.loc.join('.') === 'spec.extra')).toHaveLength(1);
    }
  });
});
