// MCP through the agent server with the real agent, a scripted model over HTTP, a real MCP server
// child process over stdio and a real streamable-HTTP MCP server on loopback. Secrets fill the
// configuration's placeholders before connecting, and never show up in events or the server log.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createAgent } from '../agent.ts';
import { parseEvent } from '../../api/events/parse.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { startHttpMcpServer, STDIO_SERVER, type HttpMcpServer } from '../../testing/mcp/server.ts';
import { eventually, startTestServer, tempDir, userText, type TestServer } from '../../agent-server/test-support.ts';

const TOKEN = 'tok-7f3a9c-very-secret';
let llm: ScriptedLlm;
let remote: HttpMcpServer;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let logText = '';

beforeAll(async () => {
  llm = await startScriptedLlm();
  remote = await startHttpMcpServer();
});
afterAll(async () => {
  await llm.close();
  await remote.close();
});
beforeEach(async () => {
  dir = tempDir('agent-mcp-');
  logText = '';
  const sink = new Writable({ write: (chunk, _enc, cb) => ((logText += String(chunk)), cb()) });
  s = await startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' }, log: pino({ level: 'trace' }, sink) });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runToEnd(body: Record<string, unknown>, text: string): Promise<{ id: string; items: any[]; status: string }> {
  const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id as string;
  await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
  const status = await eventually(async () => {
    const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
    return st === 'finished' || st === 'error' ? st : undefined;
  }, 20_000);
  const items = (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items;
  return { id, items, status };
}

describe('MCP servers of a conversation', () => {
  it('connects stdio and HTTP servers with secrets filled in, runs their tools, masks the secret and stops the child on delete', async () => {
    const record = join(dir.path, 'record.jsonl');
    const wd = join(dir.path, 'project');
    llm.push(
      (req) => {
        const names = (req.tools ?? []).map((t) => t.function.name);
        expect(names).toEqual(expect.arrayContaining(['local_echo', 'local_whoami', 'remote_whoami', 'remote_echo']));
        const echo = req.tools!.find((t) => t.function.name === 'local_echo')!.function.parameters as any;
        expect(echo.required).toEqual(['text']);
        expect(Object.keys(echo.properties)).toEqual(['summary', 'text']);
        return {
          toolCalls: [
            { name: 'local_whoami', arguments: {} },
            { name: 'remote_whoami', arguments: {} },
            { name: 'local_echo', arguments: { text: 'hi ${API_TOKEN}' } },
            { name: 'local_fail', arguments: {} },
            { name: 'local_echo', arguments: {} },
          ],
        };
      },
      (req) => {
        const toolText = JSON.stringify(req.messages.filter((m) => m.role === 'tool'));
        expect(toolText).toContain('token=<secret-hidden>');
        expect(toolText).not.toContain(TOKEN);
        return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
      },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: wd },
      agent: {
        llm: { model: 'openai/scripted' },
        mcp_config: {
          mcpServers: {
            local: { command: process.execPath, args: [STDIO_SERVER, record, '${UNSET_OPTION:-plain}'], env: { API_TOKEN: '${API_TOKEN}' } },
            remote: { url: remote.url, headers: { Authorization: 'Bearer ${API_TOKEN}' } },
          },
        },
      },
      secrets: { API_TOKEN: { kind: 'StaticSecret', value: TOKEN } },
    };
    const { id, items, status } = await runToEnd(body, 'use the MCP tools');
    expect(status).toBe('finished');

    // The servers received the filled values.
    const started = readFileSync(record, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(started).toHaveLength(1);
    expect(started[0].token).toBe(TOKEN);
    expect(started[0].args).toEqual(['plain']);
    expect(remote.authorizations).toContain(`Bearer ${TOKEN}`);

    // OpenHands shapes: definitions, actions, observations.
    const prompt = items.find((e) => e.kind === 'SystemPromptEvent');
    const def = prompt.tools.find((t: any) => t.title === 'local_echo');
    expect(def).toMatchObject({ kind: 'MCPToolDefinition', action_type: 'MCPToolAction', observation_type: 'MCPToolObservation', mcp_tool: { name: 'echo', inputSchema: { required: ['text'] } } });
    expect(def.annotations.readOnlyHint).toBe(true);
    const actions = items.filter((e) => e.kind === 'ActionEvent');
    expect(actions[2].action).toEqual({ kind: 'MCPToolAction', data: { text: 'hi ${API_TOKEN}' } });
    const obs = items.filter((e) => e.kind === 'ObservationEvent').map((e) => e.observation);
    expect(obs[0]).toMatchObject({ kind: 'MCPToolObservation', tool_name: 'local_whoami', is_error: false, content: [{ text: "[Tool 'local_whoami' executed.]" }, { text: 'token=<secret-hidden>' }] });
    expect(obs[1].content[1].text).toBe('token=<secret-hidden>');
    // Secret references in call arguments are filled at call time (and masked in the answer).
    expect(obs[2].content[1].text).toBe('echo: hi <secret-hidden>');
    expect(obs[3]).toMatchObject({ tool_name: 'local_fail', is_error: true });
    // Arguments the schema refuses: an AgentErrorEvent, and the run went on.
    const err = items.find((e) => e.kind === 'AgentErrorEvent');
    expect(err.error).toContain("Missing required argument(s) for MCP tool 'local_echo': text");

    expect(JSON.stringify(items)).not.toContain(TOKEN);
    expect(logText).not.toContain(TOKEN);
    // Every event is valid on the wire (what the app ingests).
    for (const e of items) expect(() => parseEvent(e)).not.toThrow();

    // Deleting the conversation stops the stdio server.
    expect(alive(started[0].pid)).toBe(true);
    expect((await s.api(`/api/conversations/${id}`, { method: 'DELETE' })).status).toBe(200);
    await eventually(() => !alive(started[0].pid), 5000);
  });

  it('pausing a run stops the stdio server; the next run starts it again', async () => {
    const record = join(dir.path, 'record.jsonl');
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    llm.push(
      { toolCalls: [{ name: 'echo', arguments: { text: 'one' } }] },
      // Held until the pause hangs up on the model call.
      (req) => {
        held();
        return new Promise((resolve) => req.signal.addEventListener('abort', () => resolve({ content: 'never seen' })));
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'back' } }] },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'p') },
      agent: { llm: { model: 'openai/scripted' }, mcp_config: { mcpServers: { only: { command: process.execPath, args: [STDIO_SERVER, record] } } } },
    };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id as string;
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('go', true) });
    await holding;
    const first = JSON.parse(readFileSync(record, 'utf8').trim()).pid as number;
    expect(alive(first)).toBe(true);
    expect((await s.api(`/api/conversations/${id}/pause`, { method: 'POST' })).status).toBe(200);
    await eventually(() => !alive(first), 5000);

    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('continue', true) });
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 20_000);
    const starts = readFileSync(record, 'utf8').trim().split('\n').map((l) => JSON.parse(l).pid as number);
    expect(starts).toHaveLength(2);
    expect(starts[1]).not.toBe(first);
  });

  it('a server that dies mid-call answers with an error observation and the conversation goes on', async () => {
    const record = join(dir.path, 'record.jsonl');
    llm.push({ toolCalls: [{ name: 'crash', arguments: {} }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] });
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'p') },
      agent: { llm: { model: 'openai/scripted' }, mcp_config: { mcpServers: { only: { command: process.execPath, args: [STDIO_SERVER, record] } } } },
    };
    const { items, status } = await runToEnd(body, 'crash it');
    expect(status).toBe('finished');
    const obs = items.find((e) => e.kind === 'ObservationEvent').observation;
    expect(obs).toMatchObject({ kind: 'MCPToolObservation', tool_name: 'crash', is_error: true });
    expect(obs.content[0].text).toContain('Error calling MCP tool crash');
  });

  it('an unknown placeholder ends the run with a clear error before anything starts', async () => {
    const record = join(dir.path, 'record.jsonl');
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'p') },
      agent: { llm: { model: 'openai/scripted' }, mcp_config: { mcpServers: { local: { command: process.execPath, args: [STDIO_SERVER, record], env: { API_TOKEN: '${MISSING_TOKEN}' } } } } },
      secrets: { API_TOKEN: { kind: 'StaticSecret', value: TOKEN } },
    };
    const before = llm.requests.length;
    const { items, status } = await runToEnd(body, 'hello');
    expect(status).toBe('error');
    const err = items.find((e) => e.kind === 'ConversationErrorEvent');
    expect(err.code).toBe('MCPConfigError');
    expect(err.detail).toContain('mcpServers.local.env.API_TOKEN uses ${MISSING_TOKEN}');
    expect(existsSync(record)).toBe(false);
    expect(llm.requests.length).toBe(before);
  });

  it("takes 1.58's server map as well as the mcpServers form: a disabled server is left out, env values are masked in ConversationInfo, a bad server is a 422", async () => {
    const record = join(dir.path, 'record-map.jsonl');
    const server = { command: process.execPath, args: [STDIO_SERVER, record], env: { API_TOKEN: '${API_TOKEN}' } };
    llm.push(
      (req) => {
        expect((req.tools ?? []).map((t) => t.function.name).filter((n) => n.includes('echo'))).toEqual(['echo']);
        return { toolCalls: [{ name: 'whoami', arguments: {} }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const wd = { kind: 'LocalWorkspace', working_dir: join(dir.path, 'map') };
    const { id, items, status } = await runToEnd({ workspace: wd, agent: { llm: { model: 'openai/scripted' }, mcp_config: { only: server, off: { ...server, args: [STDIO_SERVER, join(dir.path, 'off.jsonl')], enabled: false }, plain: { url: remote.url, headers: { 'X-Literal': 'literal-header-value-5' }, enabled: false } } }, secrets: { API_TOKEN: { kind: 'StaticSecret', value: TOKEN } } }, 'which tools?');
    expect(status).toBe('finished');
    expect(items.filter((e) => e.kind === 'ObservationEvent' && e.observation.kind === 'MCPToolObservation').map((e) => e.observation.content.at(-1).text)).toEqual(['token=<secret-hidden>']);
    expect(readFileSync(record, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(dir.path, 'off.jsonl'))).toBe(false);
    const info = (await s.api(`/api/conversations/${id}`)).body;
    expect(info.agent.mcp_config.only.env).toEqual({ API_TOKEN: '**********' });
    expect(info.agent.mcp_config.plain.headers).toEqual({ 'X-Literal': '**********' });
    expect(JSON.stringify(info)).not.toMatch(/tok-7f3a9c|literal-header-value/);

    const refused = async (mcp_config: unknown) => {
      const r = await s.api('/api/conversations', { method: 'POST', body: { workspace: wd, agent: { llm: { model: 'openai/scripted' }, mcp_config } } });
      expect(r.status).toBe(422);
      return r.body.detail.map((d: any) => d.loc.join('.'));
    };
    expect(await refused({ only: { ...server, bogus: 1 } })).toEqual(['body.agent.mcp_config.only.bogus']);
    expect(await refused({ only: { ...server, type: 'stdio' } })).toEqual(['body.agent.mcp_config.only.type']); // 1.58's map has no `type`
    expect(await refused({ only: { args: [] } })).toEqual(['body.agent.mcp_config.only']);
    expect(await refused({ mcpServers: { only: { url: 'http://127.0.0.1:9/mcp', bogus: 1 } } })).toEqual(['body.agent.mcp_config.mcpServers.only.bogus']);
    expect(await refused({ mcpServers: 'x' })).toEqual(['body.agent.mcp_config.mcpServers']);
    expect(logText).not.toContain(TOKEN);
  });
});
