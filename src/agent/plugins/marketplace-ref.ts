// A plugin named by reference (`name` or `name@marketplace`) in the marketplaces a conversation
// registered (agent.agent_context.registered_marketplaces), as OpenHands' MarketplaceRegistry
// resolves it for POST /load_plugin: the marketplace repository is fetched like a plugin, its
// manifest (`.plugin/marketplace.json` or `.claude-plugin/marketplace.json`) read, and the entry
// turned into a plugin source a start request could carry (so a restart loads it again).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { PluginSource } from '../../api/agent-server/index.ts';
import { fetchPlugin, PluginFetchError } from './source.ts';

export interface MarketplaceRegistration {
  name: string;
  source: string;
  ref?: string | null;
  repo_path?: string | null;
}

/** A reference that cannot be resolved: `notFound` (404) or a bad reference (400), with OpenHands' messages. */
export class PluginRefError extends Error {
  readonly notFound: boolean;
  constructor(message: string, notFound: boolean) {
    super(message);
    this.notFound = notFound;
  }
}

const MANIFESTS = ['.plugin/marketplace.json', '.claude-plugin/marketplace.json'];

function parseRef(ref: string): [name: string, marketplace: string | undefined] {
  if (!ref.includes('@')) {
    if (!ref) throw new PluginRefError('Plugin reference must not be empty', false);
    return [ref, undefined];
  }
  const at = ref.lastIndexOf('@');
  const [name, market] = [ref.slice(0, at), ref.slice(at + 1)];
  if (!name || !market) throw new PluginRefError("Plugin reference must use 'plugin-name@marketplace-name'", false);
  return [name, market];
}

/** The plugin entries of one marketplace, as plugin sources. */
async function entries(reg: MarketplaceRegistration, o: { baseDir: string; signal?: AbortSignal }): Promise<Map<string, PluginSource>> {
  const cacheDir = join(tmpdir(), `agentyard-marketplace-${randomBytes(6).toString('hex')}`);
  try {
    const { dir } = await fetchPlugin({ source: reg.source, ref: reg.ref ?? null, repo_path: reg.repo_path ?? null }, { cacheDir, baseDir: o.baseDir, ...(o.signal ? { signal: o.signal } : {}) });
    const file = MANIFESTS.map((m) => join(dir, m)).find((p) => existsSync(p));
    if (!file) throw new PluginFetchError(`Marketplace '${reg.name}' has no ${MANIFESTS.join(' or ')}`);
    let manifest: { plugins?: unknown; metadata?: { pluginRoot?: unknown } };
    try {
      manifest = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      throw new PluginFetchError(`Marketplace '${reg.name}': its manifest is not valid JSON`);
    }
    const root = typeof manifest.metadata?.pluginRoot === 'string' ? manifest.metadata.pluginRoot : '';
    const out = new Map<string, PluginSource>();
    for (const raw of Array.isArray(manifest.plugins) ? manifest.plugins : []) {
      const e = raw as { name?: unknown; source?: unknown };
      if (typeof e.name !== 'string' || !e.name) continue;
      const src = e.source;
      if (typeof src === 'string') {
        if (src.startsWith('/') || src.startsWith('~') || src.includes('://')) {
          out.set(e.name, { source: src });
          continue;
        }
        // Inside the marketplace's own repository: the same source, one directory down (never above it).
        const inside = posix.normalize(posix.join(reg.repo_path ?? '', root, src)).replace(/\/$/, '');
        if (inside === '..' || inside.startsWith('../')) continue;
        out.set(e.name, { source: reg.source, ref: reg.ref ?? null, ...(inside && inside !== '.' ? { repo_path: inside } : {}) });
      } else if (src && typeof src === 'object') {
        const s = src as { source?: unknown; repo?: unknown; url?: unknown; ref?: unknown; path?: unknown };
        const rest = { ref: typeof s.ref === 'string' ? s.ref : null, repo_path: typeof s.path === 'string' ? s.path : null };
        if (s.source === 'github' && typeof s.repo === 'string') out.set(e.name, { source: `github:${s.repo}`, ...rest });
        else if ((s.source === 'url' || s.source === 'git') && typeof s.url === 'string') out.set(e.name, { source: s.url, ...rest });
      }
    }
    return out;
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

/** The source of the plugin `ref` names. Throws PluginRefError (not found, ambiguous, bad reference) or PluginFetchError. */
export async function resolvePluginRef(ref: string, registrations: readonly MarketplaceRegistration[], o: { baseDir: string; signal?: AbortSignal }): Promise<PluginSource> {
  const [name, market] = parseRef(ref);
  if (market !== undefined) {
    const reg = registrations.find((r) => r.name === market);
    if (!reg) throw new PluginRefError(`Marketplace '${market}' is not registered`, true);
    const found = (await entries(reg, o)).get(name);
    if (!found) throw new PluginRefError(`Plugin '${name}' not found in marketplace '${market}'`, true);
    return found;
  }
  const matches: [string, PluginSource][] = [];
  const failures: string[] = [];
  for (const reg of registrations) {
    try {
      const found = (await entries(reg, o)).get(name);
      if (found) matches.push([reg.name, found]);
    } catch (err) {
      failures.push(`${reg.name}: ${(err as Error).message}`);
    }
  }
  if (matches.length > 1) throw new PluginRefError(`Plugin '${name}' is ambiguous; found in multiple marketplaces: ${matches.map(([m]) => m).join(', ')}. Use '${name}@<marketplace-name>'.`, false);
  if (matches.length === 1) return matches[0]![1];
  if (failures.length && failures.length === registrations.length) throw new PluginRefError(`Plugin '${name}' not found; marketplace fetch failed: ${failures.join('; ')}`, true);
  throw new PluginRefError(`Plugin '${name}' not found in any registered marketplace`, true);
}
