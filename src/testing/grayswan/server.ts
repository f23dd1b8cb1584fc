// A stand-in for GraySwan's Cygnal monitor (the hosted guard model behind GraySwanAnalyzer), over
// real HTTP, the way the scripted model plays an OpenAI-compatible provider. It refuses what the
// real service refuses: a request without `Authorization: Bearer <key>` (401), a body that is not
// `{messages: [...], policy_id}` (400). Each answer is scripted: a violation score (0..1) with an
// optional indirect-prompt-injection flag, or an HTTP status.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, readBody } from '../scripted-llm/server.ts';

export interface MonitorRequest {
  messages: { role: string; content?: unknown; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] }[];
  policy_id: string;
  authorization: string | undefined;
}

export type MonitorAnswer = { violation: number; ipi?: boolean } | { status: number };

export interface GraySwanStandIn {
  /** The monitor endpoint (what GraySwanAnalyzer's `api_url` names). */
  url: string;
  requests: MonitorRequest[];
  push(...answers: MonitorAnswer[]): void;
  remaining(): number;
  close(): Promise<void>;
}

/** `score`: answers from the request when no pushed answer is left (side-by-side flows: the same verdict whatever the arrival order). */
export async function startGraySwanStandIn(opts: { apiKey: string; score?: (req: MonitorRequest) => MonitorAnswer }): Promise<GraySwanStandIn> {
  const answers: MonitorAnswer[] = [];
  const requests: MonitorRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/cygnal/monitor') return json(res, 404, { detail: 'Not Found' });
      const authorization = req.headers.authorization;
      if (authorization !== `Bearer ${opts.apiKey}`) return json(res, 401, { detail: 'Invalid API key' });
      let body: { messages?: unknown; policy_id?: unknown };
      try {
        body = JSON.parse(await readBody(req)) as typeof body;
      } catch {
        return json(res, 400, { detail: 'Invalid JSON' });
      }
      if (!Array.isArray(body.messages) || typeof body.policy_id !== 'string') return json(res, 400, { detail: 'messages and policy_id are required' });
      requests.push({ messages: body.messages as MonitorRequest['messages'], policy_id: body.policy_id, authorization });
      const answer = answers.shift() ?? opts.score?.(requests.at(-1)!);
      if (!answer) return json(res, 500, { detail: 'The GraySwan stand-in has no more answers' });
      if ('status' in answer) return json(res, answer.status, { detail: 'scripted failure' });
      return json(res, 200, { violation: answer.violation, ipi: answer.ipi ?? false });
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cygnal/monitor`,
    requests,
    push: (...a) => void answers.push(...a),
    remaining: () => answers.length,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
