// MCP configuration: shapes, placeholder filling, and one ConversationMcp against a real stdio server.
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STDIO_SERVER } from '../../testing/mcp/server.ts';
import { tempDir } from '../../agent-server/test-support.ts';
import { ConversationMcp, expandSecrets, modelToolName, fillPlaceholders, McpConfigError, McpConnectError, requestMcpSource, resolveServer, resolveSources } from './index.ts';

const none = () => undefined;
let dir: ReturnType<typeof tempDir> | undefined;
afterEach(() => dir?.remove());

describe('MCP configuration', () => {
  it('fills placeholders from variables, then secrets, then defaults; an unknown name is an error naming the field', () => {
    const look = (n: string) => ({ TOKEN: 'sekret' })[n];
    expect(fillPlaceholders('a ${TOKEN} ${X:-dflt} ${Y:-}', look, 'f')).toBe('a sekret dflt ');
    expect(() => fillPlaceholders('${NOPE}', look, 'mcpServers.s.url')).toThrow(/mcpServers.s.url uses \$\{NOPE\}/);
    expect(resolveServer('s', { command: 'run', args: ['${ROOT}/x'], env: { T: '${TOKEN}' } }, look, { ROOT: '/p' })).toEqual({ kind: 'stdio', command: 'run', args: ['/p/x'], env: { T: 'sekret' } });
    expect(resolveServer('r', { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } }, look)).toEqual({ kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer sekret' } });
    expect(resolveServer('r', { url: 'http://127.0.0.1:1/sse', transport: 'sse' }, none).kind).toBe('sse');
  });

  it('refuses shapes it cannot use', () => {
    expect(() => resolveServer('s', {}, none)).toThrow(McpConfigError);
    expect(() => resolveServer('s', { command: 'x', args: 'nope' }, none)).toThrow(/args must be an array/);
    expect(() => resolveServer('s', { url: 'not a url' }, none)).toThrow(/not a valid URL/);
    expect(() => resolveServer('s', { url: 'http://h', transport: 'ws' }, none)).toThrow(/transport/);
    expect(() => requestMcpSource({ mcpServers: [] })).toThrow(McpConfigError);
    expect(requestMcpSource({})).toEqual([]);
    expect(requestMcpSource(undefined)).toEqual([]);
  });

  it('later sources override earlier ones by server name; errors name the source', () => {
    const merged = resolveSources([{ origin: 'agent.mcp_config', servers: { a: { command: 'one' } } }, { origin: "plugin 'p' .mcp.json", servers: { a: { command: 'two' } } }], {});
    expect(merged.get('a')).toMatchObject({ command: 'two' });
    expect(() => resolveSources([{ origin: "plugin 'p' .mcp.json", servers: { a: { command: '${X}' } } }], {})).toThrow(/^plugin 'p' .mcp.json: mcpServers.a.command/);
  });

  it('model tool names keep to what model APIs accept', () => {
    expect(modelToolName('my.server_get-item')).toBe('my_server_get-item');
    expect(modelToolName('x'.repeat(80))).toHaveLength(64);
  });

  it('expands $NAME and ${NAME} in call arguments from secrets only', () => {
    expect(expandSecrets({ a: 'x $T ${T} ${U:-d} $HOME', b: ['$T'], c: 1 }, { T: 'v' })).toEqual({ a: 'x v v d $HOME', b: ['v'], c: 1 });
  });
});

describe('ConversationMcp', () => {
  it('connects a stdio server, lists tools, and close() stops the child', async () => {
    dir = tempDir('mcp-conn-');
    const record = join(dir.path, 'r.jsonl');
    const mcp = new ConversationMcp({ cwd: dir.path, secrets: () => ({ API_TOKEN: 'abc123' }) });
    const tools = await mcp.connect([{ origin: 'test', servers: { s: { command: process.execPath, args: [STDIO_SERVER, record], env: { API_TOKEN: '${API_TOKEN}' } } } }]);
    expect(tools.map((t) => t.name)).toEqual(['echo', 'whoami', 'fail', 'crash']);
    expect(mcp.connected).toBe(true);
    const { pid, token } = JSON.parse(readFileSync(record, 'utf8'));
    expect(token).toBe('abc123');
    await mcp.close();
    expect(mcp.connected).toBe(false);
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('a command that does not exist is a McpConnectError and nothing stays open', async () => {
    dir = tempDir('mcp-conn-');
    const mcp = new ConversationMcp({ cwd: dir.path, secrets: () => ({}) });
    await expect(mcp.connect([{ origin: 'test', servers: { s: { command: join(dir.path, 'no-such-binary') } } }])).rejects.toThrow(McpConnectError);
    expect(mcp.connected).toBe(false);
  });

  it("a remote server's auth (OpenHands MCPAuthCredential) becomes headers, placeholders filled; oauth2 goes to the OAuth client", () => {
    const lookup = (n: string) => ({ TOKEN: 't0k' })[n];
    const url = 'http://127.0.0.1:9/mcp';
    expect(resolveServer('s', { url, auth: { strategy: 'bearer', value: '${TOKEN}' } }, lookup)).toEqual({ kind: 'http', url, headers: { Authorization: 'Bearer t0k' } });
    expect(resolveServer('s', { url, auth: { strategy: 'api_key', value: 'k', header_name: 'X-Api-Key' } }, lookup)).toMatchObject({ headers: { 'X-Api-Key': 'k' } });
    expect(resolveServer('s', { url, auth: { strategy: 'basic', username: 'u', password: 'p' } }, lookup)).toMatchObject({ headers: { Authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } });
    expect(resolveServer('s', { url, headers: { 'X-A': '1' }, auth: { strategy: 'header', headers: { 'X-B': '${TOKEN}' } } }, lookup)).toMatchObject({ headers: { 'X-A': '1', 'X-B': 't0k' } });
    expect(resolveServer('s', { url, auth: { strategy: 'oauth2', authentication: { type: 'oauth', client_id: 'c' } } }, lookup)).toEqual({ kind: 'http', url, headers: {}, oauth: { authentication: { type: 'oauth', client_id: 'c' } } });
    expect(() => resolveServer('s', { url, auth: 'x' }, lookup)).toThrow(McpConfigError);
  });
});
