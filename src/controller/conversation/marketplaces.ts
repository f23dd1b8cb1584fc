// Auto-Load (spec part 4, rule 2): the plugins of the marketplaces snapshotted into the
// Conversation at start are listed by the sandbox's agent server (POST
// /api/agentyard/marketplaces/plugins) and added to the start request's `plugins`. The user's
// token goes along only when the marketplace lives on a configured Git host. A marketplace that
// cannot be read does not stop the start: the conversation gets a Warning event naming it.
import type { MarketplacePluginsResponse } from '../../api/agent-server/git.ts';
import type { Conversation, PluginSpec } from '../../api/conversation.ts';
import { isAgentyardError } from '../../api/errors.ts';
import type { AgentServerClient } from '../../runtime/agent-server-client.ts';
import type { Logger } from '../../util/log.ts';
import type { EventRecorder } from '../events.ts';
import { basicAuthorization, providerOfUrl, tokenSecretName, type GitSettings } from './repository.ts';

export const REASON_MARKETPLACE_NOT_LOADED = 'MarketplaceNotLoaded';

const key = (p: PluginSpec) => `${p.source}\u0000${p.ref ?? ''}\u0000${p.repo_path ?? ''}`;

export async function autoLoadPlugins(
  client: AgentServerClient,
  conv: Conversation,
  secrets: Record<string, string>,
  git: GitSettings,
  opts: { log?: Logger; recorder?: EventRecorder } = {},
): Promise<PluginSpec[]> {
  const seen = new Set((conv.spec.plugins ?? []).map(key));
  const out: PluginSpec[] = [];
  const skip = (name: string, why: string) => {
    opts.log?.warn({ conversation: conv.metadata.name, marketplace: name }, why);
    opts.recorder?.record(conv, 'Warning', REASON_MARKETPLACE_NOT_LOADED, `Marketplace ${name} was not loaded: ${why}`);
  };
  for (const m of conv.spec.autoLoadMarketplaces ?? []) {
    const provider = providerOfUrl(m.url, git.hosts);
    const token = provider ? secrets[tokenSecretName(provider)] : undefined;
    let res: MarketplacePluginsResponse;
    try {
      res = (await client.postJson('/api/agentyard/marketplaces/plugins', {
        url: m.url,
        ...(m.ref ? { ref: m.ref } : {}),
        ...(m.path ? { path: m.path } : {}),
        ...(provider && token ? { authorization: basicAuthorization(provider, token) } : {}),
      })) as MarketplacePluginsResponse;
    } catch (err) {
      if (isAgentyardError(err) && err.code === 'Unavailable') throw err; // retried with the start step
      skip(m.name, `the sandbox could not list its plugins (${isAgentyardError(err) ? err.code : 'error'})`);
      continue;
    }
    if (res.status !== 'OK') {
      skip(m.name, res.detail ?? res.status);
      continue;
    }
    for (const p of res.plugins) {
      const spec: PluginSpec = { source: p.source, ...(p.ref ? { ref: p.ref } : {}), ...(p.repo_path ? { repo_path: p.repo_path } : {}) };
      if (seen.has(key(spec))) continue;
      seen.add(key(spec));
      out.push(spec);
    }
  }
  return out;
}
