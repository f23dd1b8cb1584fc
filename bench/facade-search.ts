// The facade's busiest read, `GET /api/v1/app-conversations/search` (a user's 20 conversations,
// authenticated by API key, on the SQLite stores), against its floor: a bare Koa app on the same
// machine whose one route answers the same JSON body. Requests/s over keep-alive connections
// (FACADE_CONNECTIONS, default 8) for FACADE_SECONDS (default 3) per round, A/B interleaved over 3
// rounds, medians. Target: ≥ 50 % of the bare route's requests/s.
//   node bench/facade-search.ts
import Router from '@koa/router';
import Koa from 'koa';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { API_VERSION, LABEL_OWNER } from '../src/api/meta.ts';
import { ConversationKind } from '../src/api/conversation.ts';
import { systemClock } from '../src/controller/clock.ts';
import { SqliteAppStore, startApiServer } from '../src/facade/index.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const PATH = '/api/v1/app-conversations/search?limit=20';

/**
 * Requests/s of GET `url` over `connections` keep-alive connections for `ms`, and this process's
 * CPU time per request (server and load generator alike): what a request costs whatever the
 * machine's load does to the rate.
 */
async function load(url: string, headers: { [k: string]: string }, connections: number, ms: number): Promise<{ rate: number; cpuUs: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let done = 0;
  const until = performance.now() + ms;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { agent, headers }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`${url} answered ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        await one();
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - t0) / 1000);
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  return { rate, cpuUs: (cpu.user + cpu.system) / done };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchFacadeSearch(record: Record): Promise<void> {
  const connections = Number(process.env.FACADE_CONNECTIONS ?? 8);
  const ms = Number(process.env.FACADE_SECONDS ?? 3) * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-facade-'));
  const store = new SqliteStore(join(dir, 'store.db'), { clock: systemClock });
  const db = new SqliteAppStore(join(dir, 'app.db'));
  const api = await startApiServer({ store, db, clock: systemClock, namespace: 'default', settings: { capacity: 10 }, port: 0, host: '127.0.0.1' });
  const bare = new Koa();
  const router = new Router();
  let body: unknown;
  router.get('/api/v1/app-conversations/search', (ctx) => {
    ctx.body = body;
  });
  bare.use(router.routes());
  const bareServer = createServer(bare.callback());
  await new Promise<void>((r) => bareServer.listen(0, '127.0.0.1', r));
  const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}${PATH}`;
  try {
    const user = await db.createUser('bench');
    const key = await db.createApiKey(user.id);
    for (let i = 0; i < 20; i++) {
      await store.create(ConversationKind, { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: `${i}`.padStart(32, 'c'), namespace: 'default', labels: { [LABEL_OWNER]: user.id } }, spec: { owner: user.id } });
    }
    const headers = { authorization: `Bearer ${key}` };
    body = await (await fetch(`${api.url}${PATH}`, { headers })).json();
    if ((body as { items: unknown[] }).items.length !== 20) throw new Error(`the search found ${(body as { items: unknown[] }).items.length} of 20 conversations`);
    await load(`${api.url}${PATH}`, headers, connections, 1_000); // warm-up
    await load(bareUrl, {}, connections, 1_000);
    const [ours, floor, oursCpu, floorCpu]: [number[], number[], number[], number[]] = [[], [], [], []];
    for (let round = 0; round < 3; round++) {
      const a = await load(`${api.url}${PATH}`, headers, connections, ms);
      const b = await load(bareUrl, {}, connections, ms);
      ours.push(a.rate), oursCpu.push(a.cpuUs), floor.push(b.rate), floorCpu.push(b.cpuUs);
    }
    const [o, f] = [median(ours), median(floor)];
    const share = o / f;
    record('facade: bare Koa route (floor)', f, 'req/s', `the same ${JSON.stringify(body).length}-byte JSON body, ${connections} connections`);
    record('facade: CPU per request, search / bare', median(oursCpu), 'us', `bare ${median(floorCpu).toFixed(0)} us: ${((100 * median(floorCpu)) / median(oursCpu)).toFixed(0)} % of the bare route's rate on an idle CPU`);
    record('facade: GET app-conversations/search', o, 'req/s', `${(share * 100).toFixed(0)} % of the bare route: ${share >= 0.5 ? 'met' : `MISSED by ${((0.5 - share) * 100).toFixed(0)} points`} (target ≥ 50 %)`);
  } finally {
    bareServer.closeAllConnections();
    await new Promise((r) => bareServer.close(r));
    await api.close();
    store.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows: string[] = [];
  await benchFacadeSearch((name, value, unit, note = '') => rows.push(`${name.padEnd(40)} ${`${value.toFixed(0)} ${unit}`.padStart(12)}  ${note}`));
  console.log(rows.join('\n'));
}
