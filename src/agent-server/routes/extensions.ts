// The extensions repository (OpenHands 1.58.2 skills_router.py / plugins_router.py):
//   GET  /api/skills/catalog       the public and user skills an agent profile launch can load
//   POST /api/skills/sync          fetch the clone again (strict: a failed fetch is an error)
//   GET  /api/skills/marketplace   the marketplace's entries, with installed flags
//   GET  /api/plugins/marketplace  its true plugins (./plugins/...), with attach coordinates
// Mounted before the skills and plugins routers, whose `/skills/*` and `/plugins/*` belong to
// installation. Where the repository cannot be reached, the answers say so as 1.58 does: a sync
// `{status: "error"}`, empty catalogs (the reason is in the server log).
import Router from '@koa/router';
import type { MarketplaceCatalogResponse, PluginsMarketplaceCatalogResponse, SkillCatalogResponse, SyncResponse } from '../../api/agent-server/extensions.ts';
import { Invalid } from '../../api/errors.ts';
import { invalidateSkillsCatalog, pluginsMarketplace, skillsMarketplace } from '../../agent/extensions/catalog.ts';
import { invalidatePublicSkills, loadPublicSkills, repoPathProblem, updateExtensionsRepo, type ExtensionsConfig, type MarketplaceRegistration } from '../../agent/skills/extensions-repo.ts';
import { loadUserSkillsSync } from '../../agent/skills/load.ts';
import { mergeByName, skillInfo } from '../../agent/skills/types.ts';

export function extensionRoutes(cfg: ExtensionsConfig): Router {
  const r = new Router();

  r.get('/skills/catalog', async (ctx) => {
    // OpenHands' discover_profile_skills: public < user, merged by name; no org or project skills
    // (they need a workspace), and no marketplace registrations.
    const pub = await loadPublicSkills(cfg);
    const user = loadUserSkillsSync(cfg.home);
    const userNames = new Set(user.map((s) => s.name));
    const body: SkillCatalogResponse = {
      skills: mergeByName(pub, user).map((s) => ({ ...skillInfo(s), origin: pub.some((p) => p.name === s.name) && !userNames.has(s.name) ? 'public' : 'user' })),
    };
    ctx.body = body;
  });

  r.post('/skills/sync', async (ctx) => {
    const dir = await updateExtensionsRepo(cfg, { strict: true });
    if (dir) {
      invalidatePublicSkills();
      invalidateSkillsCatalog();
    }
    const body: SyncResponse = dir ? { status: 'success', message: 'Skills repository synced successfully' } : { status: 'error', message: 'Failed to sync skills repository' };
    ctx.body = body;
  });

  r.get('/skills/marketplace', async (ctx) => {
    const body: MarketplaceCatalogResponse = { skills: await skillsMarketplace(cfg) };
    ctx.body = body;
  });

  r.get('/plugins/marketplace', async (ctx) => {
    const body: PluginsMarketplaceCatalogResponse = { plugins: await pluginsMarketplace(cfg) };
    ctx.body = body;
  });

  return r;
}

/** OpenHands' repo_path rule for a registration: relative, `/` separators, no `..`; 422 at `loc`. */
export function checkRegistrations(regs: readonly MarketplaceRegistration[], loc: (string | number)[]): void {
  const issues = regs.flatMap((reg, i) => {
    const p = reg.repo_path;
    if (p == null) return [];
    const msg = repoPathProblem(p);
    return msg ? [{ loc: [...loc, i, 'repo_path'], msg: `Value error, ${msg}`, type: 'value_error' }] : [];
  });
  if (issues.length) throw new Invalid(issues);
}
