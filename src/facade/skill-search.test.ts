// GET /api/v1/skills/search over real HTTP and real Git: the skills of the caller's user
// configuration repository (their Git login's .agents, read with their token) and the plugins of
// their registered marketplaces; filtered, paged, and kept per user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../testing/git-http/server.ts';
import { startHarness, type Harness } from './test-support.ts';

let h: Harness;
let git: GitHttpServer;
beforeAll(async () => {
  git = await startGitHttpServer();
  h = await startHarness({ marketplaceListing: 'any-host' }, { gitHosts: { github: git.url, gitlab: undefined, bitbucket: undefined, forgejo: undefined } });
});
afterAll(async () => {
  await h?.close();
  await git?.close();
});

describe('/api/v1/skills/search', () => {
  it('is an empty page for a user with no Git login and no marketplaces', async () => {
    expect((await h.call('GET', '/api/v1/skills/search')).body).toEqual({ items: [], next_page_id: null });
  });

  it("lists the user configuration repository's skills and the marketplaces' plugins, filtered and paged", async () => {
    git.createRepo(
      'alice-gh/.agents',
      {
        main: {
          'skills/deploy/SKILL.md': '---\nname: deploy\ndescription: How to deploy.\n---\nRun make deploy.\n',
          'microagents/greet.md': '---\nname: greet\ntriggers: [hello]\n---\nSay hi back.\n',
        },
      },
      { token: 'ghp-alice' },
    );
    const manifest = { name: 'team', plugins: [{ name: 'lint', source: './plugins/lint' }] };
    git.createRepo('acme/market', { main: { '.claude-plugin/marketplace.json': JSON.stringify(manifest), 'plugins/lint/README.md': 'lint\n' } });
    await h.call('POST', '/api/v1/secrets', { body: { name: 'GITHUB_TOKEN', value: 'ghp-alice' } });
    await h.call('POST', '/api/v1/settings', { body: { git_login: 'alice-gh' } });
    expect((await h.call('POST', '/api/v1/settings/marketplaces', { body: { name: 'team', url: `${git.url}/acme/market.git` } })).status).toBe(201);

    const all = await h.call('GET', '/api/v1/skills/search');
    expect(all.status).toBe(200);
    expect(all.body).toEqual({
      items: [
        { name: 'deploy', type: 'agentskills', source: 'user', triggers: null },
        { name: 'greet', type: 'knowledge', source: 'user', triggers: ['hello'] },
        { name: 'lint', type: 'plugin', source: 'marketplace:team', triggers: null },
      ],
      next_page_id: null,
    });
    expect((await h.call('GET', '/api/v1/skills/search?query=GRE')).body.items.map((s: { name: string }) => s.name)).toEqual(['greet']);
    const first = await h.call('GET', '/api/v1/skills/search?limit=2');
    expect(first.body.items).toHaveLength(2);
    const rest = await h.call('GET', `/api/v1/skills/search?limit=2&page_id=${first.body.next_page_id}`);
    expect(rest.body).toEqual({ items: [all.body.items[2]], next_page_id: null });
    expect((await h.call('GET', '/api/v1/skills/search?limit=0')).status).toBe(422);
    // Bob has neither the login nor the marketplace.
    expect((await h.call('GET', '/api/v1/skills/search', { key: h.bob.key })).body.items).toEqual([]);
  });
});
