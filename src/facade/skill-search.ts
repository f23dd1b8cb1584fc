// GET /api/v1/skills/search: the skills the caller's new conversations get from outside their
// repository, without starting one: the user configuration repository of their Git login
// (`<login>/.agents`, read with their <PROVIDER>_TOKEN on that configured host only) and the plugins
// of their registered marketplaces (personal and organization; listed at the plugin level, as
// OpenHands' marketplace preview does). Repository skills are per conversation:
// GET /app-conversations/{id}/skills. Each search reads the sources afresh (shallow clones), so a
// change pushed a moment ago shows.
import type { SkillSearchQuery } from '../api/app/llm-settings.ts';
import { loadOrgSkills } from '../agent/skills/sources.ts';
import { authenticatedUrl, configRepository, DEFAULT_GIT_HOSTS, DEFAULT_GIT_SETTINGS, tokenSecretName } from '../controller/conversation/repository.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { listMarketplacePlugins, listMarketplaces } from './marketplaces.ts';
import { pageOf, type Page } from './paging.ts';
import { storedSecretValues } from './user-secrets.ts';

export interface SkillInfo {
  name: string;
  type: string;
  source: string;
  triggers: string[] | null;
}

async function userSkills(d: FacadeDeps, user: AppUser): Promise<SkillInfo[]> {
  const settings = await d.db.getSettings(user.id);
  const hosts = d.gitHosts ?? DEFAULT_GIT_HOSTS;
  const base = settings.git_login ? hosts[settings.git_login_provider] : undefined;
  if (!settings.git_login || !base) return [];
  const provider = settings.git_login_provider;
  const repo = configRepository(settings.git_login, provider, { ...DEFAULT_GIT_SETTINGS, hosts });
  const token = (await storedSecretValues(d, user))[tokenSecretName(provider)];
  // A missing configuration repository is normal: no skills.
  const skills = await loadOrgSkills(authenticatedUrl(base, repo, provider, token), settings.git_login);
  return skills.map((s) => ({ name: s.name, type: s.type, source: 'user', triggers: s.triggers.length ? s.triggers : null }));
}

async function marketplaceSkills(d: FacadeDeps, user: AppUser): Promise<SkillInfo[]> {
  const regs = await listMarketplaces(d, user);
  const lists = await Promise.all(regs.map((r) => listMarketplacePlugins(d, user, r.name)));
  return lists.flatMap((l) => l.plugins.map((p) => ({ name: p.name, type: 'plugin', source: `marketplace:${l.marketplace.name}`, triggers: null })));
}

export async function searchSkills(d: FacadeDeps, user: AppUser, q: SkillSearchQuery): Promise<Page<SkillInfo>> {
  const [mine, offered] = await Promise.all([userSkills(d, user), marketplaceSkills(d, user)]);
  const wanted = q.query?.toLowerCase();
  const rows = [...mine, ...offered]
    .filter((s) => wanted === undefined || s.name.toLowerCase().includes(wanted))
    .map((s) => ({ key: s.name, name: s.source, item: s }));
  return pageOf(rows, { pageId: q.page_id, limit: q.limit ?? 100, descending: false });
}
