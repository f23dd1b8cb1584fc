import { describe, expect, it } from 'vitest';
import { REDACTED, redact, redactText } from './support-bundle.ts';

describe('support bundle redaction', () => {
  it('removes Secret data and sensitive env values, keeps the rest', () => {
    const secret = { kind: 'Secret', metadata: { name: 's' }, data: { key: 'c2VjcmV0' } };
    expect(redact(secret)).toMatchObject({ data: { key: REDACTED } });
    const pod = { spec: { containers: [{ env: [{ name: 'LLM_API_KEY', value: 'sk-live' }, { name: 'LLM_MODEL', value: 'gpt' }] }] } };
    expect(JSON.stringify(redact(pod))).not.toContain('sk-live');
    expect(JSON.stringify(redact(pod))).toContain('gpt');
  });

  it('masks key-like strings in logs', () => {
    const text = redactText('key ay_abcdefghijk1234 and sk-ABCDEFGH12345 "session_api_key":"xyz12345" ok');
    expect(text).not.toMatch(/ay_abcdefghijk1234|sk-ABCDEFGH12345|xyz12345/);
    expect(text).toContain('ok');
  });
});

describe('support bundle redaction of applied copies', () => {
  it('drops managedFields and the last-applied copy of an object', () => {
    const dep = { metadata: { managedFields: [{ manager: 'helm' }], annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"env":[{"name":"X_TOKEN","value":"t0ps3cret"}]}' } } };
    const text = JSON.stringify(redact(dep));
    expect(text).not.toContain('t0ps3cret');
    expect(text).not.toContain('managedFields');
  });
});
