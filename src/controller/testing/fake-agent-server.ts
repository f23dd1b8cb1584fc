// A stand-in agent server on loopback for reconciler tests: records the conversations it is asked
// to start and answers as scripted per conversation id (201 by default).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAgentServer {
  url: string;
  /** Start requests received, with the session key header as `key`. */
  started: Record<string, unknown>[];
  /** conversation id (hex, no dashes) → [status, body] to answer instead of 201. */
  answers: Map<string, [number, unknown]>;
  /** Commands run through POST /api/bash/execute_bash_command; each exits 1 with no output (no setup script, no hook). The listing of .openhands before them answers 404 here (no directory), so a start runs none. */
  commands: string[];
  /** Warm-pool hand-overs received (POST /api/agentyard/hand-over), with the session key header as `key`. */
  handOvers: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startFakeAgentServer(): Promise<FakeAgentServer> {
  const started: Record<string, unknown>[] = [];
  const answers = new Map<string, [number, unknown]>();
  const commands: string[] = [];
  const handOvers: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/api/bash/execute_bash_command') {
        commands.push(String((JSON.parse(body) as { command: unknown }).command));
        const out = { id: '0', timestamp: new Date().toISOString(), command_id: '0', order: 0, exit_code: 1, stdout: null, stderr: null, kind: 'BashOutput' };
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      }
      if (req.method === 'POST' && req.url === '/api/agentyard/hand-over') {
        handOvers.push({ ...(JSON.parse(body) as Record<string, unknown>), key: req.headers['x-session-api-key'] });
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
      }
      if (req.method !== 'POST' || req.url !== '/api/conversations') return void res.writeHead(404).end();
      const request = JSON.parse(body) as Record<string, unknown>;
      const id = String(request.conversation_id).replaceAll('-', '');
      const [status, answer] = answers.get(id) ?? [201, { id, execution_status: 'idle' }];
      if (status < 300) started.push({ ...request, key: req.headers['x-session-api-key'] });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    started,
    answers,
    commands,
    handOvers,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
