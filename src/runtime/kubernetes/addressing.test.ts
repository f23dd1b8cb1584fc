import { describe, expect, it } from 'vitest';
import { loadRuntimeAddressing } from './addressing.ts';

describe('runtime addressing', () => {
  it('builds <runtime_id>-runtime.<base>, http by default', () => {
    const a = loadRuntimeAddressing({ RUNTIME_BASE_URL: 'agents.example.com' });
    expect(a.hostFor('abc')).toBe('abc-runtime.agents.example.com');
    expect(a.urlFor('abc')).toBe('http://abc-runtime.agents.example.com');
  });

  it('serves https when RUNTIME_DISABLE_SSL is false', () => {
    const a = loadRuntimeAddressing({ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_DISABLE_SSL: 'false', RUNTIME_URL_PATTERN: 'https://{runtime_id}-runtime.agents.example.com' });
    expect(a.urlFor('abc')).toBe('https://abc-runtime.agents.example.com');
  });

  it.each([
    [{ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_URL_PATTERN: '{runtime_id}.sandboxes.example.com' }, /RUNTIME_URL_PATTERN '\{runtime_id\}\.sandboxes\.example\.com' disagrees with RUNTIME_BASE_URL 'agents\.example\.com'/],
    [{ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_URL_SEPARATOR: '.', RUNTIME_URL_PATTERN: '{runtime_id}-runtime.agents.example.com' }, /RUNTIME_URL_SEPARATOR '\.'/],
    [{ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_URL_PATTERN: 'sandbox.agents.example.com' }, /placeholder/],
    [{ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_URL_PATTERN: 'https://{runtime_id}-runtime.agents.example.com' }, /uses https but RUNTIME_DISABLE_SSL=true/],
    [{}, /RUNTIME_BASE_URL is required/],
    [{ RUNTIME_BASE_URL: 'x.com', RUNTIME_DISABLE_SSL: 'maybe' }, /RUNTIME_DISABLE_SSL must be true or false/],
  ])('refuses %o', (env, message) => {
    expect(() => loadRuntimeAddressing(env)).toThrow(message);
  });
});
