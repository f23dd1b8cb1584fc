// The archive excludes, with OpenHands 1.58's gitignore-like semantics, and the credential rules.
import { describe, expect, it } from 'vitest';
import { compileExcludes, globRegExp, isSensitiveGitInternal } from './excludes.ts';
import { excludePathspecs, stripCredentials } from './git-delta.ts';

describe('archive excludes', () => {
  it.each([
    // pattern, path, is a directory, excluded
    ['build/', 'build', true, true],
    ['build/', 'build', false, false], // a file named like an excluded directory is kept
    ['build/', 'src/build/x.js', false, true],
    ['*.pyc', 'a/b/c.pyc', false, true],
    ['*.pyc', 'a/b/c.py', false, false],
    ['secrets/prod', 'secrets/prod/key', false, true],
    ['secrets/prod', 'other/secrets/prod', false, false], // anchored at the root
    ['*/test', 'a/test', true, true],
    ['*/test', 'a/b/test', true, false], // `*` does not cross `/`
    ['[!a]x', 'bx', false, true],
    ['[!a]x', 'ax', false, false],
    ['a.b', 'aXb', false, false], // `.` is literal
  ] as const)('%s on %s (dir: %s) → %s', (pattern, path, isDir, want) => {
    expect(compileExcludes([pattern])(path.split('/'), isDir)).toBe(want);
  });

  it('never archives git credentials or reflogs', () => {
    expect(isSensitiveGitInternal(['.git', 'config'])).toBe(true);
    expect(isSensitiveGitInternal(['.git', 'modules', 'sub', 'config'])).toBe(true);
    expect(isSensitiveGitInternal(['.git', 'logs', 'HEAD'])).toBe(true);
    expect(isSensitiveGitInternal(['.git', 'HEAD'])).toBe(false);
    expect(isSensitiveGitInternal(['src', 'config'])).toBe(false);
    expect(globRegExp('*').test('a/b')).toBe(true);
  });

  it('turns excludes into git pathspecs, and strips credentials from remotes', () => {
    expect(excludePathspecs(['node_modules/', '*.pyc', 'a/b'])).toEqual([':(glob,exclude)**/node_modules/**', ':(glob,exclude)**/*.pyc', ':(glob,exclude)**/*.pyc/**', ':(glob,exclude)a/b', ':(glob,exclude)a/b/**']);
    expect(stripCredentials('https://x-access-token:ghp_secret@github.com/o/r.git?token=t')).toBe('https://github.com/o/r.git');
    expect(stripCredentials('git@github.com:o/r.git')).toBe('git@github.com:o/r.git');
  });
});
