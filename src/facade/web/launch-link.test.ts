import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../api/errors.ts';
import { parsePluginCatalog } from './catalog.ts';
import { encodeLaunchPlugins, parseLaunchQuery } from './launch-link.ts';

const plugins = [{ source: 'github:acme/tools', ref: 'v1.2', repo_path: 'plugins/lint', parameters: { level: 'strict', max: 3, fix: true } }];

describe('launch links', () => {
  it('round-trips base64url JSON, and also takes standard base64 with or without padding', () => {
    expect(parseLaunchQuery({ plugins: encodeLaunchPlugins(plugins), message: 'hi' })).toEqual({ plugins, message: 'hi' });
    const std = Buffer.from(JSON.stringify([{ source: 'https://git.example.com/a/b.git?x=>>>' }])).toString('base64');
    expect(std).toMatch(/[+/=]/);
    expect(parseLaunchQuery({ plugins: std }).plugins[0]!.source).toBe('https://git.example.com/a/b.git?x=>>>');
    // A "+" that form decoding turned into a space still decodes.
    expect(parseLaunchQuery({ plugins: std.replaceAll('+', ' ') }).plugins).toHaveLength(1);
  });

  it.each([
    ['no plugins parameter', {}, /no plugins parameter/],
    ['two plugins parameters', { plugins: ['a', 'b'] }, /more than one plugins parameter/],
    ['not base64', { plugins: '{"source":1}' }, /not base64/],
    ['not JSON', { plugins: Buffer.from('[{"source": "a"').toString('base64url') }, /does not decode to JSON/],
    ['an empty list', { plugins: encodeLaunchPlugins([]) }, /not valid/],
    ['a plugin without source', { plugins: Buffer.from('[{"ref":"main"}]').toString('base64url') }, /not valid at \/0/],
    ['an unknown field', { plugins: Buffer.from('[{"source":"a","token":"x"}]').toString('base64url') }, /not valid at \/0/],
    ['a nested parameter', { plugins: Buffer.from('[{"source":"a","parameters":{"x":{"y":1}}}]').toString('base64url') }, /not valid at \/0\/parameters/],
  ])('refuses %s with a message for people', (_what, query, message) => {
    let caught: unknown;
    try {
      parseLaunchQuery(query as Record<string, string>);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BadRequest);
    expect((caught as Error).message).toMatch(message);
  });
});

describe('the plugin catalog file', () => {
  it('reads YAML and refuses duplicates and unknown fields, naming the file', () => {
    expect(parsePluginCatalog('plugins:\n  - {name: Lint, source: "github:acme/tools", repo_path: lint}\n', 'f.yaml')).toEqual([{ name: 'Lint', source: 'github:acme/tools', repo_path: 'lint' }]);
    expect(() => parsePluginCatalog('plugins:\n  - {name: A, source: x}\n  - {name: A, source: y}\n', 'f.yaml')).toThrow(/f\.yaml: plugin name "A" appears twice/);
    expect(() => parsePluginCatalog('plugins:\n  - {name: A, source: x, secret: y}\n', 'f.yaml')).toThrow(/f\.yaml: \/plugins\/0/);
  });
});
