// Sandbox operations of /api/v1/sandboxes. The facade only writes the Sandbox resource (create,
// spec.paused, delete); the controller makes it so and reports status.
import { ANNOTATION_CREATED_AT, API_VERSION, createdAtOf, LABEL_OWNER } from '../api/meta.ts';
import { BadRequest, Conflict, Gone, Invalid, NotFound } from '../api/errors.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import { admit } from './admission.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { pageOf, isoOf, type Page } from './paging.ts';
import { sandboxInfoRecord } from './records.ts';
import { deletedByUser, getOwned, listOwned, modify, normalizeName, sandboxPhase, sessionKeyOf } from './resources.ts';
import { newId } from './start.ts';

type Rec = Record<string, unknown>;

async function info(d: FacadeDeps, sb: Sandbox): Promise<Rec> {
  const key = sandboxPhase(sb) === 'RUNNING' ? await sessionKeyOf(d, sb.metadata.name) : undefined;
  return sandboxInfoRecord(sb, key);
}

/** Pause and resume of a sandbox the caller deleted: 410, as while it is being deleted. */
async function ownedForLifecycle(d: FacadeDeps, user: AppUser, id: string, action: string): Promise<Sandbox> {
  const sb = await getOwned(d, SandboxKind, user.id, id);
  if (sb) return sb;
  if (await deletedByUser(d, 'Sandbox', user.id, id)) throw new Gone(`Sandbox ${id} was deleted and cannot be ${action}`);
  throw new NotFound(`Sandbox ${id} not found`);
}

export async function createSandbox(d: FacadeDeps, user: AppUser, specId: string | undefined): Promise<Rec> {
  if (specId !== undefined && specId !== 'default') {
    throw new Invalid([{ loc: ['query', 'sandbox_spec_id'], msg: 'Only the default sandbox spec is available', type: 'value_error' }]);
  }
  await admit(d, 'Creating a sandbox');
  const sb = await d.store.create(SandboxKind, {
    apiVersion: API_VERSION,
    kind: 'Sandbox',
    metadata: { name: newId(), namespace: d.namespace, labels: { [LABEL_OWNER]: user.id }, annotations: { [ANNOTATION_CREATED_AT]: d.clock.now().toUTC().toISO()! } },
    spec: { owner: user.id, paused: false },
  });
  return info(d, sb);
}

export async function batchSandboxes(d: FacadeDeps, user: AppUser, ids: string[]): Promise<(Rec | null)[]> {
  const byName = new Map((await listOwned(d, SandboxKind, user.id)).map((s) => [s.metadata.name, s]));
  return Promise.all(
    ids.map(async (id) => {
      const n = normalizeName(id);
      const sb = n ? byName.get(n) : undefined;
      return sb ? info(d, sb) : null;
    }),
  );
}

export async function searchSandboxes(d: FacadeDeps, user: AppUser, q: { page_id?: string | undefined; limit?: number | undefined }): Promise<Page<Rec>> {
  const all = await listOwned(d, SandboxKind, user.id);
  const page = pageOf(
    all.map((s) => ({ key: isoOf(createdAtOf(s)), name: s.metadata.name, item: s })),
    { pageId: q.page_id, limit: q.limit ?? 100, descending: true },
  );
  return { items: await Promise.all(page.items.map((s) => info(d, s))), next_page_id: page.next_page_id };
}

function refuseTerminal(sb: Sandbox, action: string): void {
  const phase = sandboxPhase(sb);
  if (phase === 'MISSING') throw new Gone(`Sandbox ${sb.metadata.name} is being deleted and cannot be ${action}`);
  if (phase === 'ERROR') throw new Conflict(`Sandbox ${sb.metadata.name} is in ERROR and cannot be ${action}; its conversations are read-only`);
}

/** Idempotent: pausing a paused (or pausing) sandbox succeeds without a write. */
export async function pauseSandbox(d: FacadeDeps, user: AppUser, id: string): Promise<void> {
  refuseTerminal(await ownedForLifecycle(d, user, id, 'paused'), 'paused');
  await modify(d, SandboxKind, normalizeName(id)!, (s) => (s.spec.paused === true ? undefined : ((s.spec.paused = true), s)));
}

/** Idempotent: resuming a running (or resuming) sandbox succeeds without a write. */
export async function resumeSandbox(d: FacadeDeps, user: AppUser, id: string): Promise<void> {
  const sb = await ownedForLifecycle(d, user, id, 'resumed');
  refuseTerminal(sb, 'resumed');
  if (sb.spec.paused !== true) return;
  if (sb.status?.phase === 'PAUSED') await admit(d, 'Resuming this sandbox');
  await modify(d, SandboxKind, sb.metadata.name, (s) => (s.spec.paused === true ? ((s.spec.paused = false), s) : undefined));
}

/**
 * Deletes by the path id; `?sandbox_id=` is accepted for OpenHands clients (which send the id
 * there). Idempotent: deleting a sandbox that is being deleted, or that the caller deleted before
 * (a tombstone), succeeds; an id the caller never owned is 404.
 */
export async function deleteSandbox(d: FacadeDeps, user: AppUser, pathId: string, queryId: string | undefined): Promise<void> {
  let id = pathId;
  if (queryId !== undefined && queryId !== '' && queryId !== pathId) {
    // A generated client may send the literal template (`/sandboxes/{id}`) with the id in the query.
    if (normalizeName(pathId) !== undefined) throw new BadRequest(`The sandbox id in the path (${pathId}) and in ?sandbox_id= (${queryId}) differ`);
    id = queryId;
  }
  const sb = await getOwned(d, SandboxKind, user.id, id);
  if (!sb) {
    if (await deletedByUser(d, 'Sandbox', user.id, id)) return;
    throw new NotFound(`Sandbox ${id} not found`);
  }
  await d.db.recordDeletion('Sandbox', sb.metadata.name, user.id);
  if (sb.metadata.deletionTimestamp) return;
  try {
    await d.store.delete(SandboxKind, d.namespace, sb.metadata.name);
  } catch (err) {
    if (!(err instanceof NotFound)) throw err; // deleted concurrently: the outcome the caller wanted
  }
}
