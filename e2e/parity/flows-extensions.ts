// The extensions repository side by side: both servers read the same local repository shaped like
// OpenHands/extensions (EXTENSIONS_PATH for public skills; the git insteadOf of servers.ts for the
// clone behind sync and the marketplace catalogs) and the same registered marketplace. Paths into
// each server's own clone are shown relative to it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { extensionsRepo, marketplaceRepo, writeFiles } from '../../src/testing/extensions/repos.ts';
import { until } from '../../src/testing/until.ts';
import { startBody, type View } from './flows.ts';
import { PARITY_EXTENSIONS, type Side } from './servers.ts';

/** Built once for both sides (they run the flow at the same time). */
let built: { market: string } | undefined;
export function repositories(): { market: string } {
  if (!built) {
    if (!existsSync(join(PARITY_EXTENSIONS, '.git'))) extensionsRepo(PARITY_EXTENSIONS);
    built = { market: marketplaceRepo(`${PARITY_EXTENSIONS}-market`) };
  }
  return built;
}

/** A path inside the side's clone, the shared repository or the side's home, shown from its root. */
const rel = (p: unknown) =>
  typeof p === 'string'
    ? p.replace(/^.*\/cache\/skills\/public-skills/, '<clone>').replace(PARITY_EXTENSIONS, '<extensions>').replace(/^.*\/parity-(openhands|agentyard)-[^/]+/, '<home>')
    : p;
const only = { load_user: false, load_project: false, load_org: false };
/** OpenHands' source keys (ours adds public and user, its split of sdk_base). */
const sources = (b: any) => Object.fromEntries(['sandbox', 'registered_marketplaces', 'sdk_base', 'org', 'project'].map((k) => [k, b?.sources?.[k]]));
const skillView = (x: any) => ({ ...x, source: rel(x.source) });

export const EXTENSIONS_FLOWS: Record<string, (s: Side) => Promise<View>> = {
  extensions_repository: async (s) => {
    const { market } = repositories();
    const pub = await s.api('/api/skills', { method: 'POST', body: only });
    const all = await s.api('/api/skills', { method: 'POST', body: { ...only, marketplace_path: null } });
    const off = await s.api('/api/skills', { method: 'POST', body: { ...only, load_public: false } });
    const reg = await s.api('/api/skills', { method: 'POST', body: { ...only, registered_marketplaces: [{ name: 'team', source: market, auto_load: true }] } });
    const some = await s.api('/api/skills', { method: 'POST', body: { ...only, registered_marketplaces: [{ name: 'team', source: market, auto_load: ['lint-kit', 'team-style'] }, { name: 'gone', source: `${market}-missing`, auto_load: true }] } });
    const badPath = await s.api('/api/skills', { method: 'POST', body: { ...only, registered_marketplaces: [{ name: 'team', source: market, repo_path: '../up' }] } });
    // Installed as OpenHands lays it out under the side's home (both: the parent of workDir): the
    // installed skill is a user skill of the catalog, and both marketplaces flag what is installed.
    const home = join(dirname(s.workDir), '.openhands');
    writeFiles(join(home, 'skills', 'installed'), { 'beta/SKILL.md': '---\nname: beta\ndescription: b\n---\nb\n' });
    mkdirSync(join(home, 'plugins', 'installed', 'tool-kit', '.plugin'), { recursive: true });
    writeFileSync(join(home, 'plugins', 'installed', 'tool-kit', '.plugin', 'plugin.json'), JSON.stringify({ name: 'tool-kit' }));

    const catalog = await s.api('/api/skills/catalog');
    const sync = await s.api('/api/skills/sync', { method: 'POST' });
    const skillsMarket = await s.api('/api/skills/marketplace');
    const pluginsMarket = await s.api('/api/plugins/marketplace');
    return {
      public_status: pub.status,
      // By name: 1.58 reads the marketplace's names from a Python set (no stable order).
      public_skills: (pub.body.skills ?? []).map(skillView).sort((a: any, b: any) => a.name.localeCompare(b.name)),
      public_sources: sources(pub.body),
      all_names: (all.body.skills ?? []).map((x: any) => x.name).sort(),
      off_sources: sources(off.body),
      registered_names: (reg.body.skills ?? []).map((x: any) => x.name).sort(),
      registered_sources: sources(reg.body),
      selected_names: (some.body.skills ?? []).map((x: any) => x.name).sort(),
      selected_sources: sources(some.body),
      bad_repo_path: [badPath.status, (badPath.body.detail ?? []).map((d: any) => d.loc)],
      catalog: [catalog.status, (catalog.body.skills ?? []).map((x: any) => [x.name, x.origin, rel(x.source)]).sort()],
      sync: [sync.status, sync.body],
      skills_marketplace: [skillsMarket.status, (skillsMarket.body.skills ?? []).map((x: any) => ({ ...x, source: rel(x.source) }))],
      plugins_marketplace: [pluginsMarket.status, (pluginsMarket.body.plugins ?? []).map((x: any) => ({ ...x, source: rel(x.source), path: rel(x.path) }))],
    };
  },
  /**
   * A conversation with agent_context.load_public_skills and a registered marketplace that
   * auto-loads one plugin and one standalone skill: which skill names the model's system prompt
   * lists (the prompt's wording differs by server; the names must not).
   */
  extensions_conversation: async (s) => {
    const { market } = repositories();
    s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] });
    const agentContext = { load_public_skills: true, registered_marketplaces: [{ name: 'team', source: market, auto_load: ['docs-kit', 'team-style'] }] };
    const body = startBody(s, { initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }] } });
    (body['agent'] as Record<string, unknown>)['agent_context'] = agentContext;
    const r = await s.api('/api/conversations', { method: 'POST', body });
    const id = r.body.id;
    const end = await until('the run to end', async () => {
      const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
      return ['finished', 'error', 'stuck'].includes(st) ? st : undefined;
    });
    const system = JSON.stringify(s.llm.requests[0]?.messages[0] ?? '');
    const candidates = ['alpha', 'beta', 'skills/legacy', 'docs-style', 'lint-rules', 'team-style', 'kit-use'];
    return { status: r.status, end, listed: candidates.filter((n) => system.includes(`<name>${n}</name>`)) };
  },
};
