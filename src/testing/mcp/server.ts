// A tiny MCP server for tests (official SDK), over stdio (run this file with node) or streamable
// HTTP on 127.0.0.1 (startHttpMcpServer). Tools:
//   echo {text}   answers the text
//   whoami {}     answers the API_TOKEN it was given (env for stdio, Authorization header for HTTP),
//                 so tests can check the value arrived and that the agent masks it in events
//   fail {}       answers a tool error (isError)
//   crash {}      stdio only: the process exits mid-call
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const TEST_TOOLS = [
  { name: 'echo', description: 'Echo a text back', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, annotations: { readOnlyHint: true } },
  { name: 'whoami', description: 'Say which token this server was given', inputSchema: { type: 'object', properties: {} } },
  { name: 'fail', description: 'Always fails', inputSchema: { type: 'object', properties: {} } },
  { name: 'crash', description: 'Exits the server process', inputSchema: { type: 'object', properties: {} } },
];

/** The test tools' server (not yet connected to a transport). */
export function mcpServer(token: () => string | undefined): Server {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the low-level server needs no schema library
  const server = new Server({ name: 'agentyard-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TEST_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    switch (req.params.name) {
      case 'echo':
        return { content: [{ type: 'text', text: `echo: ${String(args.text)}` }] };
      case 'whoami':
        return { content: [{ type: 'text', text: `token=${token() ?? '(none)'}` }] };
      case 'fail':
        return { content: [{ type: 'text', text: 'this tool always fails' }], isError: true };
      case 'crash':
        process.exit(3);
      default:
        throw new Error(`unknown tool ${req.params.name}`);
    }
  });
  return server;
}

export interface HttpMcpServer {
  url: string;
  /** Authorization headers of every request received. */
  authorizations: string[];
  close(): Promise<void>;
}

/** Stateless streamable-HTTP MCP server on 127.0.0.1 (port 0). `whoami` answers the bearer token of the call. */
export async function startHttpMcpServer(): Promise<HttpMcpServer> {
  const authorizations: string[] = [];
  const http: HttpServer = createServer((req: IncomingMessage, res) => {
    const auth = req.headers.authorization ?? '';
    authorizations.push(auth);
    const server = mcpServer(() => auth.replace(/^Bearer /, '') || undefined);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Path of this file: run `node <STDIO_SERVER> [record-file]` for a stdio server. */
export const STDIO_SERVER = new URL(import.meta.url).pathname;

if (process.argv[1] === STDIO_SERVER) {
  // The record file gets one line per start: the API_TOKEN env and the arguments, for tests to check.
  const record = process.argv[2];
  if (record) appendFileSync(record, `${JSON.stringify({ token: process.env.API_TOKEN ?? null, args: process.argv.slice(3), pid: process.pid })}\n`);
  await mcpServer(() => process.env.API_TOKEN).connect(new StdioServerTransport());
}
