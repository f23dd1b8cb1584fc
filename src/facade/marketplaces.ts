// Registered skill marketplaces (Settings > Skills, spec part 4), kept per user in a Secret
// resource beside the stored secrets (marketplace URLs can point at private hosts; no app-DB table).
// Registering makes a marketplace known; with Auto-Load on, its plugins attach to the user's new
// conversations in its scope: a snapshot goes into the Conversation at start, so a later change
// never reaches a conversation that already started.
import { createHash } from 'node:crypto';
import type { AutoLoadMarketplace } from '../api/conversation.ts';
import { Conflict, Invalid, NotFound } from '../api/errors.ts';
import { LABEL_OWNER } from '../api/meta.ts';
import { SecretKind, type Secret } from '../api/secret.ts';
import { MAX_MARKETPLACES, type MarketplaceRegistrationCreate, type MarketplaceRegistrationUpdate } from '../api/app/requests.ts';
import type { MarketplaceRegistration } from '../api/app/responses.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';

const KEY = 'registrations.json';

export function marketplacesSecretName(userId: string): string {
  return `user-${createHash('sha256').update(userId).digest('hex').slice(0, 40)}-marketplaces`;
}

async function read(d: FacadeDeps, user: AppUser): Promise<{ secret: Secret | undefined; items: MarketplaceRegistration[] }> {
  const secret = await d.store.get(SecretKind, d.namespace, marketplacesSecretName(user.id));
  if (!secret || secret.metadata.labels?.[LABEL_OWNER] !== user.id) return { secret: undefined, items: [] };
  const raw = secret.data?.[KEY];
  return { secret, items: raw ? (JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as MarketplaceRegistration[]) : [] };
}

async function mutate(d: FacadeDeps, user: AppUser, change: (items: MarketplaceRegistration[]) => MarketplaceRegistration[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const { secret, items } = await read(d, user);
    const next = change(items.map((i) => ({ ...i })));
    const data = { [KEY]: Buffer.from(JSON.stringify(next), 'utf8').toString('base64') };
    try {
      if (secret) await d.store.update(SecretKind, { ...secret, data });
      else {
        await d.store.create(SecretKind, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: marketplacesSecretName(user.id), namespace: d.namespace, labels: { [LABEL_OWNER]: user.id } },
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

export async function listMarketplaces(d: FacadeDeps, user: AppUser): Promise<MarketplaceRegistration[]> {
  return (await read(d, user)).items;
}

export async function registerMarketplace(d: FacadeDeps, user: AppUser, req: MarketplaceRegistrationCreate): Promise<MarketplaceRegistration> {
  const scope = req.scope ?? 'personal';
  if (scope === 'organization' && !req.organization) throw new Invalid([{ loc: ['body', 'organization'], msg: 'An organization marketplace names its organization', type: 'missing' }]);
  if (scope === 'personal' && req.organization) throw new Invalid([{ loc: ['body', 'organization'], msg: 'Only organization marketplaces name an organization', type: 'value_error' }]);
  const reg: MarketplaceRegistration = {
    name: req.name,
    url: req.url,
    ref: req.ref ?? null,
    path: req.path || null,
    scope,
    organization: req.organization ?? null,
    auto_load: req.auto_load ?? false,
  };
  await mutate(d, user, (items) => {
    if (items.some((i) => i.name === req.name)) throw new Conflict(`A marketplace named ${req.name} is already registered`);
    if (items.length >= MAX_MARKETPLACES) throw new Invalid([{ loc: ['body', 'name'], msg: `At most ${MAX_MARKETPLACES} marketplaces`, type: 'too_long' }]);
    return [...items, reg];
  });
  return reg;
}

export async function updateMarketplace(d: FacadeDeps, user: AppUser, name: string, req: MarketplaceRegistrationUpdate): Promise<MarketplaceRegistration> {
  let out: MarketplaceRegistration | undefined;
  await mutate(d, user, (items) => {
    const reg = items.find((i) => i.name === name);
    if (!reg) throw new NotFound(`Marketplace ${name} is not registered`);
    if (req.url !== undefined) reg.url = req.url;
    if (req.ref !== undefined) reg.ref = req.ref;
    if (req.path !== undefined) reg.path = req.path || null;
    if (req.auto_load !== undefined) reg.auto_load = req.auto_load;
    out = reg;
    return items;
  });
  return out!;
}

export async function unregisterMarketplace(d: FacadeDeps, user: AppUser, name: string): Promise<void> {
  await mutate(d, user, (items) => {
    if (!items.some((i) => i.name === name)) throw new NotFound(`Marketplace ${name} is not registered`);
    return items.filter((i) => i.name !== name);
  });
}

/** Auto-Load marketplaces that apply to a new conversation: personal ones, and those of the selected repository's organization. */
export async function autoLoadFor(d: FacadeDeps, user: AppUser, selectedRepository: string | null | undefined): Promise<AutoLoadMarketplace[]> {
  const org = selectedRepository?.split('/')[0]?.toLowerCase();
  return (await listMarketplaces(d, user))
    .filter((m) => m.auto_load && (m.scope === 'personal' || (org !== undefined && m.organization?.toLowerCase() === org)))
    .map((m) => ({ name: m.name, url: m.url, ...(m.ref ? { ref: m.ref } : {}), ...(m.path ? { path: m.path } : {}) }));
}
