// A SandboxWarmPool on the real node (release.ts): made with kubectl, filled by the controller
// with real sandbox Pods, shown READY/DESIRED by `kubectl get swp`; a conversation start through
// the ingress claims a member (no cold start) and the controller replaces it. Timings are
// bench/warm-pool-node.ts's; this checks that it works.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../embedded/harness.ts';
import { KEPT_LOGS, realNodeTools } from './node.ts';
import { installRelease, SANDBOXES, type NodeRelease } from './release.ts';

const tools = realNodeTools();
const POOL = 'node-pool';

interface StartTask {
  id: string;
  status: string;
  detail?: string | null;
  sandbox_id?: string | null;
  app_conversation_id?: string | null;
}

describe.skipIf(!tools)('a warm pool on a real node', { timeout: 10 * 60_000 }, () => {
  let r: NodeRelease;
  let failed = false;

  beforeAll(async () => {
    // Small requests: the pool's Pods and the claimed one share the node's two cores with the release.
    r = await installRelease(tools!, { sandbox: { resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '1Gi' } } } });
  }, 30 * 60_000);

  afterAll(async () => {
    await r?.stop(failed);
    console.log(`e2e/node warm pool timings (ms): ${JSON.stringify({ ...r?.node.timings, ...r?.timings })}${failed ? `\nlogs of the failed run: ${KEPT_LOGS}` : ''}`);
  }, 5 * 60_000);

  const kubectl = (...args: string[]) => r.node.kubectl('-n', SANDBOXES, ...args);
  const members = async () => (await kubectl('get', 'sandboxes', '-l', `agentyard.dev/warm-pool=${POOL}`, '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}')).split('\n').filter(Boolean);

  it('kubectl apply makes a pool; the controller fills it and `kubectl get swp` shows READY/DESIRED', async () => {
    const file = join(r.node.cluster.dir, 'pool.yaml');
    writeFileSync(file, JSON.stringify({ apiVersion: 'agentyard.dev/v1alpha1', kind: 'SandboxWarmPool', metadata: { name: POOL, namespace: SANDBOXES }, spec: { replicas: 2 } }));
    await kubectl('apply', '-f', file);
    const table = await eventually(async () => {
      const out = await kubectl('get', 'swp');
      return new RegExp(`^${POOL}\\s+2\\s+2\\s`, 'm').test(out) ? out : undefined;
    }, 'the pool to have 2 ready members', 5 * 60_000, 1_000).catch(async (err: Error) => {
      failed = true;
      throw new Error(`${err.message}\n${await kubectl('get', 'swp,sandboxes,pods')}`);
    });
    expect(table.split('\n')[0]).toMatch(/^NAME\s+READY\s+DESIRED\s+AGE/);
    // Real Pods, running and warmed up (their agent server warms up before it listens), owned by nobody yet.
    const names = await members();
    expect(names).toHaveLength(2);
    for (const name of names) {
      expect(await kubectl('get', 'pod', name, '-o', 'jsonpath={.status.phase}')).toBe('Running');
      expect(await kubectl('get', 'pod', name, '-o', 'jsonpath={.spec.containers[0].env[?(@.name=="AGENTYARD_WARM_UP")].value}')).toBe('1');
      expect(await kubectl('get', 'sandbox', name, '-o', 'jsonpath={.spec.owner}')).toBe('');
    }
  });

  it('a start through the ingress claims a member and reaches READY on it; the pool is refilled', async () => {
    const before = await members();
    const res = await r.api<StartTask[]>('POST', '/api/v1/app-conversations/stream-start', {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const task = res.body.at(-1)!;
    if (task.status !== 'READY') failed = true;
    expect(task.status, task.detail ?? '').toBe('READY');
    expect(before).toContain(task.sandbox_id);
    // Claimed: the user's sandbox now (no pool label), its Pod the same one that waited in the pool.
    expect(await members()).not.toContain(task.sandbox_id);
    expect(await kubectl('get', 'sandbox', task.sandbox_id!, '-o', 'jsonpath={.metadata.labels.agentyard\\.dev/claimed-from}')).toBe(POOL);
    // The controller replaces the claimed member.
    await eventually(async () => (new RegExp(`^${POOL}\\s+2\\s+2\\s`, 'm').test(await kubectl('get', 'swp')) ? true : undefined), 'the pool refilled to 2 ready', 5 * 60_000, 1_000);
    expect((await members()).filter((m) => !before.includes(m))).toHaveLength(1);
    const { body } = await r.api<{ ready: number; claimed: number }>('GET', `/api/v1/warm-pools/${POOL}`);
    expect(body).toMatchObject({ ready: 2, claimed: 1 });
  });
});
