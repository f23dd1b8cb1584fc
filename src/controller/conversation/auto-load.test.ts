// Auto-Load and configuration repositories at STARTING_CONVERSATION, against a real agent server
// (fake agents record what they were created with) and a real Git smart-HTTP server: the
// marketplaces snapshotted into the Conversation become `plugins` entries after the explicit ones,
// an unreadable marketplace leaves a Warning and does not stop the start, and the owner's stored
// token reaches the private marketplace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { LABEL_OWNER } from '../../api/meta.ts';
import { SecretKind, userSecretsName } from '../../api/secret.ts';
import { FakeAgents, startTestServer, tempDir, userText, type TestServer } from '../../agent-server/test-support.ts';
import { startGitHttpServer, type GitHttpServer } from '../../testing/git-http/server.ts';
import { controllerEnv, NS } from '../testing/env.ts';
import { ConversationReconciler } from './reconciler.ts';
import { DEFAULT_GIT_SETTINGS } from './repository.ts';
import { dashedUuid } from './start-request.ts';

const TOKEN = 'ghp_autoLoadToken42';
const hex = (n: number) => n.toString(16).padStart(32, '0');

let dir: ReturnType<typeof tempDir>;
let agents: FakeAgents;
let server: TestServer;
let git: GitHttpServer;

beforeAll(async () => {
  dir = tempDir();
  agents = new FakeAgents(async () => undefined);
  server = await startTestServer(dir.path, { agents, sessionKeys: [] });
  git = await startGitHttpServer();
  const manifest = { name: 'team', plugins: [{ name: 'lint', source: './plugins/lint' }, { name: 'fmt', source: './plugins/fmt' }] };
  git.createRepo('acme/market', { main: { 'catalog/.plugin/marketplace.json': JSON.stringify(manifest) } }, { token: TOKEN });
  git.createRepo('acme/.agents', { main: { 'skills/house/SKILL.md': '---\nname: house\ndescription: house rules\n---\nUse tabs.\n' } }, { token: TOKEN });
  git.createRepo('acme/widgets', { main: { 'README.md': 'w\n' } }, { token: TOKEN });
});
afterAll(async () => {
  await server?.close();
  await git?.close();
  dir?.remove();
});

describe('STARTING_CONVERSATION: Auto-Load marketplaces and the organization configuration repository', () => {
  it('adds the marketplace plugins and the organization skills to the start request', async () => {
    const env = controllerEnv();
    const warnings: string[] = [];
    const reconciler = new ConversationReconciler({
      store: env.store,
      clock: env.clock,
      settings: env.settings,
      git: { ...DEFAULT_GIT_SETTINGS, hosts: { ...DEFAULT_GIT_SETTINGS.hosts, github: git.url } },
      recorder: { record: (_o, type, reason, message) => void (type === 'Warning' && warnings.push(`${reason}: ${message}`)) },
    });
    await env.store.create(SecretKind, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: userSecretsName('alice'), namespace: NS, labels: { [LABEL_OWNER]: 'alice' } },
      data: { GITHUB_TOKEN: Buffer.from(TOKEN).toString('base64') },
    });
    await env.createSandbox('warm', 'alice');
    await env.settleSandbox('warm');
    env.runtime.boot('warm', server.url);
    await env.settleSandbox('warm');

    const market = `${git.url}/acme/market.git`;
    await env.createConversation(hex(1), {
      sandboxName: 'warm',
      selectedRepository: 'acme/widgets',
      plugins: [{ source: 'github:acme/explicit' }, { source: market, repo_path: 'catalog/plugins/fmt' }],
      autoLoadMarketplaces: [
        { name: 'team', url: market, path: 'catalog' },
        { name: 'gone', url: `${git.url}/acme/missing.git` },
      ],
    });
    for (let i = 0; i < 12; i++) await reconciler.reconcile(`${NS}/${hex(1)}`);
    const conv = (await env.store.get(ConversationKind, NS, hex(1)))!;
    expect(conv.status?.startTask?.status, conv.status?.startTask?.detail).toBe('READY');

    // The agent is created with the stored start request when the first message arrives.
    const sent = await server.api(`/api/conversations/${dashedUuid(hex(1))}/events`, { method: 'POST', body: userText('hello', true) });
    expect(sent.status).toBeLessThan(300);
    for (let i = 0; i < 50 && agents.hosts.length === 0; i++) await new Promise((r) => setImmediate(r));
    const request = agents.hosts.at(-1)!.request;
    expect(request.plugins).toEqual([
      { source: 'github:acme/explicit' },
      { source: market, repo_path: 'catalog/plugins/fmt' },
      { source: market, repo_path: 'catalog/plugins/lint' },
    ]);
    expect((request.agent?.agent_context?.skills ?? []).map((s) => s['name'])).toEqual(['house']);
    expect(warnings).toEqual([expect.stringMatching(/^MarketplaceNotLoaded: Marketplace gone was not loaded: /)]);
    expect(warnings.join()).not.toContain(TOKEN);
  });
});
