// Registered skill marketplaces (Settings > Skills, spec part 4). Personal ones are kept per user in
// a Secret resource beside the stored secrets (marketplace URLs can point at private hosts; no
// app-DB table). Organization ones are one list for the whole installation, in a Secret of their
// own: every member sees them, only administrators register, change or remove them.
// Registering makes a marketplace known; with Auto-Load on, its plugins attach to the user's new
// conversations in its scope: a snapshot goes into the Conversation at start, so a later change
// never reaches a conversation that already started.
import { createHash } from 'node:crypto';
import type { MarketplacePluginsResponse } from '../api/agent-server/git.ts';
import type { AutoLoadMarketplace } from '../api/conversation.ts';
import { Conflict, Forbidden, Invalid, NotFound } from '../api/errors.ts';
import { GROUP, LABEL_OWNER } from '../api/meta.ts';
import { SecretKind, type Secret } from '../api/secret.ts';
import { MAX_MARKETPLACES, type MarketplaceRegistrationCreate, type MarketplaceRegistrationUpdate } from '../api/app/requests.ts';
import type { MarketplaceRegistration } from '../api/app/responses.ts';
import { marketplacePlugins } from '../agent-server/git/marketplace.ts';
import { basicAuthorization, DEFAULT_GIT_HOSTS, providerOfUrl, tokenSecretName } from '../controller/conversation/repository.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { storedSecretValues } from './user-secrets.ts';

const KEY = 'registrations.json';
/** The installation's organization marketplaces. */
export const ORGANIZATION_MARKETPLACES = 'agentyard-organization-marketplaces';
const LABEL_SCOPE = `${GROUP}/marketplace-scope`;

export function marketplacesSecretName(userId: string): string {
  return `user-${createHash('sha256').update(userId).digest('hex').slice(0, 40)}-marketplaces`;
}

/** Where one list lives: a user's personal list, or the installation's organization list. */
interface ListRef {
  name: string;
  /** A Secret of this name is this list only when it carries these labels (a stray one is ignored). */
  labels: Record<string, string>;
}

const personalList = (user: AppUser): ListRef => ({ name: marketplacesSecretName(user.id), labels: { [LABEL_OWNER]: user.id } });
const organizationList: ListRef = { name: ORGANIZATION_MARKETPLACES, labels: { [LABEL_SCOPE]: 'organization' } };

function decode(secret: Secret): MarketplaceRegistration[] {
  const raw = secret.data?.[KEY];
  return raw ? (JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as MarketplaceRegistration[]) : [];
}

async function read(d: FacadeDeps, list: ListRef): Promise<{ secret: Secret | undefined; items: MarketplaceRegistration[] }> {
  const secret = await d.store.get(SecretKind, d.namespace, list.name);
  if (!secret || Object.entries(list.labels).some(([k, v]) => secret.metadata.labels?.[k] !== v)) return { secret: undefined, items: [] };
  return { secret, items: decode(secret) };
}

async function mutate(d: FacadeDeps, list: ListRef, change: (items: MarketplaceRegistration[]) => MarketplaceRegistration[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const { secret, items } = await read(d, list);
    const next = change(items.map((i) => ({ ...i })));
    const data = { [KEY]: Buffer.from(JSON.stringify(next), 'utf8').toString('base64') };
    try {
      if (secret) await d.store.update(SecretKind, { ...secret, data });
      else {
        await d.store.create(SecretKind, { apiVersion: 'v1', kind: 'Secret', metadata: { name: list.name, namespace: d.namespace, labels: list.labels }, type: 'Opaque', data });
      }
      return;
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= 5) throw err;
    }
  }
}

async function isAdmin(d: FacadeDeps, user: AppUser): Promise<boolean> {
  return (await d.db.getUserInfo(user.id))?.admin === true;
}

/** The user's personal marketplaces, then the installation's organization ones. */
export async function listMarketplaces(d: FacadeDeps, user: AppUser): Promise<MarketplaceRegistration[]> {
  if (await migrateLegacyOrganizationEntries(d, user, (await read(d, personalList(user))).items)) return listMarketplaces(d, user);
  const [personal, organization] = await Promise.all([read(d, personalList(user)), read(d, organizationList)]);
  return [...personal.items, ...organization.items];
}

/** The list a registration of `name` lives in for this user (personal first), refusing a non-admin an organization one. */
async function listOf(d: FacadeDeps, user: AppUser, name: string, forChange: boolean): Promise<{ list: ListRef; reg: MarketplaceRegistration }> {
  for (const list of [personalList(user), organizationList]) {
    const reg = (await read(d, list)).items.find((i) => i.name === name);
    if (!reg) continue;
    if (forChange && list === organizationList && !(await isAdmin(d, user))) throw new Forbidden('Only administrators change organization marketplaces');
    return { list, reg };
  }
  throw new NotFound(`Marketplace ${name} is not registered`);
}

export async function registerMarketplace(d: FacadeDeps, user: AppUser, req: MarketplaceRegistrationCreate): Promise<MarketplaceRegistration> {
  const scope = req.scope ?? 'personal';
  if (scope === 'organization' && !req.organization) throw new Invalid([{ loc: ['body', 'organization'], msg: 'An organization marketplace names its organization', type: 'missing' }]);
  if (scope === 'personal' && req.organization) throw new Invalid([{ loc: ['body', 'organization'], msg: 'Only organization marketplaces name an organization', type: 'value_error' }]);
  if (scope === 'organization' && !(await isAdmin(d, user))) throw new Forbidden('Only administrators register organization marketplaces');
  const reg: MarketplaceRegistration = {
    name: req.name,
    url: req.url,
    ref: req.ref ?? null,
    path: req.path || null,
    scope,
    organization: req.organization ?? null,
    auto_load: req.auto_load ?? false,
  };
  // One name, one marketplace, for everyone who can see both lists.
  const other = scope === 'personal' ? organizationList : personalList(user);
  if ((await read(d, other)).items.some((i) => i.name === req.name)) throw new Conflict(`A marketplace named ${req.name} is already registered`);
  await mutate(d, scope === 'personal' ? personalList(user) : organizationList, (items) => {
    if (items.some((i) => i.name === req.name)) throw new Conflict(`A marketplace named ${req.name} is already registered`);
    if (items.length >= MAX_MARKETPLACES) throw new Invalid([{ loc: ['body', 'name'], msg: `At most ${MAX_MARKETPLACES} marketplaces`, type: 'too_long' }]);
    return [...items, reg];
  });
  return reg;
}

export async function updateMarketplace(d: FacadeDeps, user: AppUser, name: string, req: MarketplaceRegistrationUpdate): Promise<MarketplaceRegistration> {
  const { list } = await listOf(d, user, name, true);
  let out: MarketplaceRegistration | undefined;
  await mutate(d, list, (items) => {
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
  const { list } = await listOf(d, user, name, true);
  await mutate(d, list, (items) => {
    if (!items.some((i) => i.name === name)) throw new NotFound(`Marketplace ${name} is not registered`);
    return items.filter((i) => i.name !== name);
  });
}

/**
 * The plugins a marketplace offers (discoverable without loading them): its manifest, read from a
 * shallow clone in a temporary directory. The caller's `<PROVIDER>_TOKEN` stored secret goes along
 * only when the marketplace lives on a configured Git host, as for Auto-Load in the sandbox. Other
 * hosts only with `marketplaceListing: 'any-host'` (FacadeSettings).
 */
export async function listMarketplacePlugins(d: FacadeDeps, user: AppUser, name: string): Promise<MarketplacePluginsResponse & { marketplace: MarketplaceRegistration }> {
  const { reg } = await listOf(d, user, name, false);
  const provider = providerOfUrl(reg.url, d.gitHosts ?? DEFAULT_GIT_HOSTS);
  if (!provider && d.settings.marketplaceListing !== 'any-host') {
    const hosts = Object.values(d.gitHosts ?? DEFAULT_GIT_HOSTS).filter(Boolean).join(', ');
    return { marketplace: reg, status: 'FAILED', plugins: [], detail: `This installation lists marketplaces on its Git hosts only (${hosts}); this one's plugins still load with Auto-Load, in the sandbox` };
  }
  const token = provider ? (await storedSecretValues(d, user))[tokenSecretName(provider)] : undefined;
  const res = await marketplacePlugins({
    url: reg.url,
    ...(reg.ref ? { ref: reg.ref } : {}),
    ...(reg.path ? { path: reg.path } : {}),
    ...(provider && token ? { authorization: basicAuthorization(provider, token) } : {}),
  });
  return { marketplace: reg, ...res };
}

/**
 * Before organization marketplaces had a list of their own, each user kept theirs in their personal
 * list, where only they saw and used it. Such entries move into the installation's list on their
 * owner's next read of their list (every Settings > Skills view and every conversation start reads
 * it), so the owner never sees a difference. The API may not list Secrets (chart Role), so this
 * runs per user rather than as one sweep. A name the installation's list has already stays personal.
 */
async function migrateLegacyOrganizationEntries(d: FacadeDeps, user: AppUser, personal: MarketplaceRegistration[]): Promise<boolean> {
  const legacy = personal.filter((i) => i.scope === 'organization');
  if (legacy.length === 0) return false;
  const taken = new Set((await read(d, organizationList)).items.map((i) => i.name));
  const movable = legacy.filter((i) => !taken.has(i.name));
  if (movable.length === 0) return false;
  await mutate(d, organizationList, (items) => [...items, ...movable.filter((m) => !items.some((i) => i.name === m.name))]);
  const names = new Set(movable.map((m) => m.name));
  await mutate(d, personalList(user), (items) => items.filter((i) => !names.has(i.name)));
  d.log?.info({ user: user.id, moved: [...names] }, 'moved organization marketplaces from a personal list to the installation list');
  return true;
}

/** Auto-Load marketplaces that apply to a new conversation: personal ones, and those of the selected repository's organization. */
export async function autoLoadFor(d: FacadeDeps, user: AppUser, selectedRepository: string | null | undefined): Promise<AutoLoadMarketplace[]> {
  const org = selectedRepository?.split('/')[0]?.toLowerCase();
  return (await listMarketplaces(d, user))
    .filter((m) => m.auto_load && (m.scope === 'personal' || (org !== undefined && m.organization?.toLowerCase() === org)))
    .map((m) => ({ name: m.name, url: m.url, ...(m.ref ? { ref: m.ref } : {}), ...(m.path ? { path: m.path } : {}) }));
}
