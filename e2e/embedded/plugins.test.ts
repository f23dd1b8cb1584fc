// Plugins and per-conversation secrets end to end, over HTTP against `agentyard up`: a plugin
// repository served by a local Git smart-HTTP server brings a skill and a stdio MCP server whose
// config names ${MY_TOKEN}; the secret comes with the same start request, reaches the first agent
// action and the MCP server, and is shown nowhere. A registered marketplace with Auto-Load attaches
// its plugin to conversations started after the registration only.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../../src/testing/git-http/server.ts';
import { STDIO_SERVER } from '../../src/testing/mcp/server.ts';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { finished, startReady, userMessage, type EventItem } from './flows.ts';
import { startServiceWithModel, type RunningService } from './harness.ts';

const TOKEN = 'mytok-e2e-7f3a9c1d5b';
const skill = (name: string, text: string) => `---\nname: ${name}\ndescription: ${text}\n---\n${text}.\n`;

describe('agentyard up: plugins, MCP servers and secrets of a conversation', () => {
  let git: GitHttpServer;
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;
  let scratch: string;
  let record: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'agentyard-plugins-e2e-'));
    record = join(scratch, 'mcp-starts.jsonl');
    git = await startGitHttpServer();
    git.createRepo('acme/tools-plugin', {
      main: {
        '.plugin/plugin.json': JSON.stringify({ name: 'acme-tools', version: '1.0.0', description: 'ACME tools' }),
        'skills/release-notes/SKILL.md': skill('release-notes', 'How ACME writes release notes'),
        'agents/reviewer.md': '---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n',
        '.mcp.json': JSON.stringify({ mcpServers: { acme: { command: process.execPath, args: [STDIO_SERVER, record], env: { API_TOKEN: '${MY_TOKEN}' } } } }),
      },
    });
    git.createRepo('acme/market', {
      main: {
        '.plugin/marketplace.json': JSON.stringify({ name: 'team', plugins: [{ name: 'lint', source: './plugins/lint' }] }),
        'plugins/lint/.plugin/plugin.json': JSON.stringify({ name: 'lint', version: '0.1.0', description: 'Lint rules' }),
        'plugins/lint/skills/lint-rules/SKILL.md': skill('lint-rules', 'The team lint rules'),
      },
    });
    // The stand-in MCP server records its starts in this suite's scratch directory, which an
    // isolated sandbox cannot see: these sandboxes run unisolated (one user). isolation.test.ts
    // covers isolated sandboxes.
    ({ llm, svc, stop } = await startServiceWithModel({ env: { AGENTYARD_SANDBOX_ISOLATION: 'off' } }));
    // One sandbox for the whole file: conversations start without a new agent server each.
    expect((await svc.api('POST', '/api/v1/settings', { sandbox_grouping_strategy: 'ADD_TO_ANY' })).status).toBe(200);
  });

  afterAll(async () => {
    await stop?.();
    await git?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const skillNames = async (id: string) => {
    const res = await svc.api<{ skills: { name: string }[] }>('GET', `/api/v1/app-conversations/${id}/skills`);
    expect(res.status).toBe(200);
    return { names: res.body.skills.map((s) => s.name), text: JSON.stringify(res.body) };
  };

  it('a plugin from a Git URL: its skill is listed, its MCP tool runs with the secret of the same request; the secret reaches the first action and is masked everywhere', async () => {
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'printf %s "$MY_TOKEN" | wc -c; echo "token: $MY_TOKEN"', summary: 'check the secret' } }] },
      (req) => {
        expect((req.tools ?? []).map((t) => t.function.name)).toContain('whoami');
        return { toolCalls: [{ name: 'whoami', arguments: {} }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'checked' } }] },
    );
    const task = await startReady(svc, {
      initial_message: userMessage('Check the token and ask the ACME server who it is'),
      plugins: [{ source: `${git.url}/acme/tools-plugin.git`, ref: 'main' }],
      secrets: { MY_TOKEN: TOKEN },
    });
    const items = await finished(svc, task.app_conversation_id);
    expect(items.find((e) => e.kind === 'ConversationErrorEvent')).toBeUndefined();
    const actions = items.filter((e) => e.kind === 'ActionEvent').map((e) => e.tool_name);
    expect(actions).toEqual(['terminal', 'whoami', 'finish']);
    // The plugin's subagent (agents/reviewer.md) does not run without the task tool (agent.tools has no task_tool_set): the conversation says so, not only a log.
    const notice = items.find((e) => e.kind === 'MessageEvent' && e.source === 'environment' && JSON.stringify(e).includes('Plugin subagents will not run'));
    expect(JSON.stringify(notice)).toContain('acme-tools:reviewer (agents/reviewer.md) is not available');

    // Rule 1: the very first action had the secret (its length printed), its value masked.
    const observations = items.filter((e) => e.kind === 'ObservationEvent') as (EventItem & { observation: { kind: string; content: { text: string }[] } })[];
    const terminal = observations[0]!.observation.content.map((c) => c.text).join('');
    expect(terminal).toContain(String(TOKEN.length));
    expect(terminal).toContain('token: <secret-hidden>');
    // The MCP server got ${MY_TOKEN} filled in; its answer comes back masked.
    const mcp = observations.find((o) => o.observation.kind === 'MCPToolObservation')!;
    expect(JSON.stringify(mcp.observation.content)).toContain('token=<secret-hidden>');
    expect(JSON.parse(readFileSync(record, 'utf8').trim().split('\n')[0]!).token).toBe(TOKEN);
    const search = await svc.api<{ items: EventItem[] }>('GET', `/api/v1/conversation/${task.app_conversation_id}/events/search?kind__eq=ObservationEvent&limit=100`);
    expect(search.body.items.map((e) => e.tool_name)).toEqual(['terminal', 'whoami', 'finish']);

    const skills = await skillNames(task.app_conversation_id);
    expect(skills.names).toContain('release-notes');
    for (const text of [JSON.stringify(items), JSON.stringify(search.body), skills.text, JSON.stringify(llm.requests.map((r) => r.messages)), svc.output.join('')]) {
      expect(text).not.toContain(TOKEN);
    }
  });

  it('a registered marketplace with Auto-Load: its plugin attaches to conversations started afterwards, not to one started before', async () => {
    const before = await startReady(svc, { initial_message: userMessage('before the registration', false) });
    const url = `${git.url}/acme/market.git`;
    const registered = await svc.api('POST', '/api/v1/settings/marketplaces', { name: 'team', url, auto_load: true });
    expect(registered.status).toBe(201);
    const after = await startReady(svc, { initial_message: userMessage('after the registration', false) });
    expect(after.sandbox_id).toBe(before.sandbox_id);

    expect((await skillNames(after.app_conversation_id)).names).toContain('lint-rules');
    expect((await skillNames(before.app_conversation_id)).names).not.toContain('lint-rules');
    const { body: task } = await svc.api<{ request: { plugins?: unknown } }[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${after.id}`);
    expect(task[0]!.request.plugins ?? null).toBeNull(); // the request as sent: Auto-Load adds nothing to it
  });
});
