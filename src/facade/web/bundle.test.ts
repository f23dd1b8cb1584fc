// The web app bundle is built from the installed packages alone: one self-contained ES module.
import { describe, expect, it } from 'vitest';
import { appBundle, buildAppBundle } from './bundle.ts';

describe('web app bundle', () => {
  it('bundles the app and Preact into one module that imports nothing', async () => {
    const { js, etag } = await buildAppBundle();
    expect(js).toContain('agentyard.apiKey');
    expect(js).not.toMatch(/\bimport\s*[\w{*"'(]|\bfrom\s*["']/);
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org\/)/);
    expect(etag).toMatch(/^"[\w-]{22}"$/);
  });

  it('builds once and serves the same bundle after', async () => {
    expect(await appBundle()).toBe(await appBundle());
  });
});
