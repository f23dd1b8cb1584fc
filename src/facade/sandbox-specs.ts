// Sandbox specs: what a conversation's sandbox starts from. One spec, `default`, the installation's
// (embedded: a local process on the host; cluster: the chart's sandbox image and resources).
import { NotFound } from '../api/errors.ts';
import type { DefaultSandboxSpec, FacadeDeps } from './deps.ts';
import { pageOf, type Page } from './paging.ts';

export const DEFAULT_SANDBOX_SPEC_ID = 'default';

type Rec = Record<string, unknown>;
const STARTED_AT = new Date().toISOString();

function defaultSpec(d: FacadeDeps): Rec {
  const s: DefaultSandboxSpec = d.sandboxSpec ?? { runtime: 'process' };
  const kube = s.runtime === 'kubernetes';
  return {
    id: DEFAULT_SANDBOX_SPEC_ID,
    runtime: s.runtime,
    image: s.image ?? null,
    // The agent server is agentyard's own, started by the runtime; no image command is involved.
    command: null,
    created_at: s.readAt ?? STARTED_AT,
    initial_env: {},
    working_dir: kube ? '/workspace/project' : `${d.dataDir ?? '<data dir>'}/sandboxes/{sandbox_id}/workspace`,
    resources: s.resources ?? null,
  };
}

export function sandboxSpecs(d: FacadeDeps): Rec[] {
  return [defaultSpec(d)];
}

export function searchSandboxSpecs(d: FacadeDeps, q: { page_id?: string | undefined; limit?: number | undefined }): Page<Rec> {
  const rows = sandboxSpecs(d).map((s) => ({ key: String(s['id']), name: String(s['id']), item: s }));
  return pageOf(rows, { pageId: q.page_id, limit: q.limit ?? 100, descending: false });
}

export function batchSandboxSpecs(d: FacadeDeps, ids: string[]): (Rec | null)[] {
  const byId = new Map(sandboxSpecs(d).map((s) => [s['id'] as string, s]));
  return ids.map((id) => byId.get(id) ?? null);
}

export function sandboxSpecOrThrow(d: FacadeDeps, id: string): Rec {
  const s = batchSandboxSpecs(d, [id])[0];
  if (!s) throw new NotFound(`Sandbox spec ${id} not found`);
  return s;
}
