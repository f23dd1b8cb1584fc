// Stored secrets (Settings > Secrets): one Secret resource per user (a Kubernetes Secret in a
// cluster, encrypted at rest in embedded mode), labelled with its owner. Names and descriptions
// can be read back; values never leave except to the user's new conversations, where the
// controller merges them under the per-conversation secrets (spec part 2, rule 2).
import { Conflict, Invalid, NotFound } from '../api/errors.ts';
import { LABEL_OWNER } from '../api/meta.ts';
import { SecretKind, userSecretsName, type Secret } from '../api/secret.ts';
import { MAX_STORED_SECRETS, MAX_STORED_SECRETS_BYTES, type StoredSecretCreate, type StoredSecretUpdate } from '../api/app/requests.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { isReservedSecretName } from './start.ts';

/** JSON map name → description, kept beside the values (descriptions are not secret). */
export const ANNOTATION_DESCRIPTIONS = 'agentyard.dev/secret-descriptions';

export interface StoredSecretInfo {
  name: string;
  description: string | null;
}

export const storedSecretsName = userSecretsName;

function infos(secret: Secret | undefined): StoredSecretInfo[] {
  if (!secret) return [];
  const descriptions = descriptionsOf(secret);
  return Object.keys(secret.data ?? {})
    .sort()
    .map((name) => ({ name, description: descriptions[name] ?? null }));
}

function descriptionsOf(secret: Secret): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(secret.metadata.annotations?.[ANNOTATION_DESCRIPTIONS] ?? '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

async function read(d: FacadeDeps, user: AppUser): Promise<Secret | undefined> {
  const secret = await d.store.get(SecretKind, d.namespace, storedSecretsName(user.id));
  // The name is derived from the id; the label check guards against a hand-made look-alike.
  return secret && secret.metadata.labels?.[LABEL_OWNER] === user.id ? secret : undefined;
}

export async function listStoredSecrets(d: FacadeDeps, user: AppUser): Promise<StoredSecretInfo[]> {
  return infos(await read(d, user));
}

/** The values, for checks inside the API only (never a response). */
export async function storedSecretValues(d: FacadeDeps, user: AppUser): Promise<Record<string, string>> {
  const data = (await read(d, user))?.data ?? {};
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

export async function getStoredSecret(d: FacadeDeps, user: AppUser, name: string): Promise<StoredSecretInfo> {
  const found = infos(await read(d, user)).find((s) => s.name === name);
  if (!found) throw new NotFound(`Secret ${name} not found`);
  return found;
}

/** Applies `change` to the user's Secret (created on first use), retrying on write conflicts. */
async function mutate(d: FacadeDeps, user: AppUser, change: (data: Record<string, string>, descriptions: Record<string, string>) => void): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const current = await read(d, user);
    const data = { ...current?.data };
    const descriptions = current ? descriptionsOf(current) : {};
    change(data, descriptions);
    const total = Object.values(data).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0);
    if (Object.keys(data).length > MAX_STORED_SECRETS) throw new Invalid([{ loc: ['body', 'name'], msg: `At most ${MAX_STORED_SECRETS} stored secrets`, type: 'too_long' }]);
    if (total > MAX_STORED_SECRETS_BYTES) throw new Invalid([{ loc: ['body', 'value'], msg: `Stored secrets are limited to ${MAX_STORED_SECRETS_BYTES / 1024} KiB in total`, type: 'too_long' }]);
    const annotations = { ...current?.metadata.annotations, [ANNOTATION_DESCRIPTIONS]: JSON.stringify(descriptions) };
    try {
      if (current) await d.store.update(SecretKind, { ...current, metadata: { ...current.metadata, annotations }, data });
      else {
        await d.store.create(SecretKind, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: storedSecretsName(user.id), namespace: d.namespace, labels: { [LABEL_OWNER]: user.id }, annotations },
          type: 'Opaque',
          data,
        });
      }
      return;
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= 5) throw err;
    }
  }
}

function checkName(name: string): void {
  if (isReservedSecretName(name)) throw new Invalid([{ loc: ['body', 'name'], msg: 'This name is reserved for the service and cannot be a secret', type: 'value_error' }]);
}

export async function createStoredSecret(d: FacadeDeps, user: AppUser, req: StoredSecretCreate): Promise<StoredSecretInfo> {
  checkName(req.name);
  await mutate(d, user, (data, descriptions) => {
    if (req.name in data) throw new Conflict(`A secret named ${req.name} already exists; update it instead`);
    data[req.name] = Buffer.from(req.value, 'utf8').toString('base64');
    if (req.description) descriptions[req.name] = req.description;
  });
  return { name: req.name, description: req.description ?? null };
}

export async function updateStoredSecret(d: FacadeDeps, user: AppUser, name: string, req: StoredSecretUpdate): Promise<StoredSecretInfo> {
  let description: string | null = null;
  await mutate(d, user, (data, descriptions) => {
    if (!(name in data)) throw new NotFound(`Secret ${name} not found`);
    if (req.value !== undefined) data[name] = Buffer.from(req.value, 'utf8').toString('base64');
    if (req.description === null) delete descriptions[name];
    else if (req.description !== undefined) descriptions[name] = req.description;
    description = descriptions[name] ?? null;
  });
  return { name, description };
}

export async function deleteStoredSecret(d: FacadeDeps, user: AppUser, name: string): Promise<void> {
  await mutate(d, user, (data, descriptions) => {
    if (!(name in data)) throw new NotFound(`Secret ${name} not found`);
    delete data[name];
    delete descriptions[name];
  });
}

/** Creates or replaces one secret (a provider token saved through POST /secrets/git-providers). */
export async function putStoredSecret(d: FacadeDeps, user: AppUser, name: string, value: string, description: string): Promise<void> {
  checkName(name);
  await mutate(d, user, (data, descriptions) => {
    data[name] = Buffer.from(value, 'utf8').toString('base64');
    descriptions[name] = description;
  });
}

/** Deletes the secrets of these names that exist (DELETE /secrets/git-providers); idempotent. */
export async function deleteStoredSecretsNamed(d: FacadeDeps, user: AppUser, names: string[]): Promise<void> {
  if (!(await read(d, user))) return;
  await mutate(d, user, (data, descriptions) => {
    for (const name of names) {
      delete data[name];
      delete descriptions[name];
    }
  });
}
