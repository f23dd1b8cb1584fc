// The plugins a registered marketplace lists, for Auto-Load (spec part 4): the marketplace
// repository is cloned shallowly into a temporary directory outside the workspace (credential
// through the environment, as for clones), its manifest read, and the clone removed. Manifest:
// `<path>/.plugin/marketplace.json` or `<path>/.claude-plugin/marketplace.json`, `plugins[]` with
// `name` and `source` (a relative directory, `{source: "github", repo}` or `{source: "url"|"git", url}`).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { MarketplacePlugin, MarketplacePluginsRequest, MarketplacePluginsResponse } from '../../api/agent-server/git.ts';
import { CLONE_TIMEOUT_MS, git, preflight, scrub } from './clone.ts';

const MANIFESTS = ['.plugin/marketplace.json', '.claude-plugin/marketplace.json'];

function pluginOf(raw: unknown, req: MarketplacePluginsRequest, root: string): MarketplacePlugin | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const entry = raw as { name?: unknown; source?: unknown };
  if (typeof entry.name !== 'string' || !entry.name) return undefined;
  const src = entry.source;
  if (typeof src === 'string') {
    // Plugins stay inside the marketplace directory.
    const inside = posix.normalize(posix.join('.', root, src));
    if (inside === '..' || inside.startsWith('../') || posix.isAbsolute(inside)) return undefined;
    const repoPath = posix.normalize(posix.join(req.path ?? '', inside)).replace(/\/$/, '');
    return { name: entry.name, source: req.url, ...(req.ref ? { ref: req.ref } : {}), ...(repoPath && repoPath !== '.' ? { repo_path: repoPath } : {}) };
  }
  if (src && typeof src === 'object') {
    const o = src as { source?: unknown; repo?: unknown; url?: unknown; ref?: unknown; path?: unknown };
    const ref = typeof o.ref === 'string' ? { ref: o.ref } : {};
    const path = typeof o.path === 'string' ? { repo_path: o.path } : {};
    if (o.source === 'github' && typeof o.repo === 'string') return { name: entry.name, source: `github:${o.repo}`, ...ref, ...path };
    if ((o.source === 'url' || o.source === 'git') && typeof o.url === 'string') return { name: entry.name, source: o.url, ...ref, ...path };
  }
  return undefined;
}

export async function marketplacePlugins(req: MarketplacePluginsRequest): Promise<MarketplacePluginsResponse> {
  const isSha = req.ref !== undefined && /^[0-9a-f]{40}$/.test(req.ref);
  const refused = await preflight({ url: req.url, authorization: req.authorization });
  if (refused) return { status: refused.status as MarketplacePluginsResponse['status'], plugins: [], detail: refused.detail };
  const dir = await mkdtemp(join(tmpdir(), 'marketplace-'));
  try {
    const target = join(dir, 'repo');
    try {
      await git(['clone', '--quiet', ...(isSha ? [] : ['--depth', '1']), ...(req.ref && !isSha ? ['--branch', req.ref] : []), '--', req.url, target], dir, req.authorization, CLONE_TIMEOUT_MS);
      if (isSha) await git(['checkout', '--quiet', req.ref!], target);
    } catch (err) {
      const e = err as { stderr?: string };
      const detail = scrub(String(e.stderr ?? '').trim().split('\n').slice(-2).join(' '), req.authorization);
      return { status: req.ref ? 'BRANCH_NOT_FOUND' : 'FAILED', plugins: [], detail: `git clone failed: ${detail || 'unknown error'}` };
    }
    for (const manifest of MANIFESTS) {
      let text: string;
      try {
        text = await readFile(join(target, req.path ?? '', manifest), 'utf8');
      } catch {
        continue;
      }
      let parsed: { plugins?: unknown; metadata?: { pluginRoot?: unknown } };
      try {
        parsed = JSON.parse(text);
      } catch {
        return { status: 'FAILED', plugins: [], detail: `${manifest} is not valid JSON` };
      }
      const root = typeof parsed.metadata?.pluginRoot === 'string' ? parsed.metadata.pluginRoot : '';
      const plugins = (Array.isArray(parsed.plugins) ? parsed.plugins : []).map((p) => pluginOf(p, req, root)).filter((p): p is MarketplacePlugin => !!p);
      return { status: 'OK', plugins, detail: null };
    }
    return { status: 'NO_MANIFEST', plugins: [], detail: `No ${MANIFESTS.join(' or ')} under ${req.path || 'the repository root'}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
