// Organization (or user) configuration repository (spec part 4): `<owner>/.agents` of the selected
// repository's owner, or `<owner>/service-config` on a host that forbids leading periods. Its
// skills are read by the sandbox's agent server (POST /api/skills with org_configs, the clone URL
// carrying the user's token) and handed to the new conversation in agent.agent_context.skills.
// A missing configuration repository is normal and gives no skills.
import type { SkillsResponse } from '../../api/agent-server/skills.ts';
import type { Conversation } from '../../api/conversation.ts';
import { isAgentyardError } from '../../api/errors.ts';
import type { AgentServerClient } from '../../runtime/agent-server-client.ts';
import type { Logger } from '../../util/log.ts';
import { authenticatedUrl, configRepository, tokenSecretName, type GitSettings } from './repository.ts';

export async function orgConfigSkills(
  client: AgentServerClient,
  conv: Conversation,
  secrets: Record<string, string>,
  git: GitSettings,
  log?: Logger,
): Promise<Record<string, unknown>[]> {
  const repo = conv.spec.selectedRepository;
  if (!repo) return [];
  const provider = conv.spec.gitProvider ?? 'github';
  const base = git.hosts[provider];
  if (!base) return [];
  const owner = repo.split('/')[0]!;
  const body = {
    load_public: false,
    load_user: false,
    load_project: false,
    load_org: true,
    org_configs: [{ repository: repo, provider, org_repo_url: authenticatedUrl(base, configRepository(owner, provider, git), provider, secrets[tokenSecretName(provider)]), org_name: owner }],
  };
  try {
    const res = (await client.postJson('/api/skills', body)) as SkillsResponse;
    return res.skills;
  } catch (err) {
    if (isAgentyardError(err) && err.code === 'Unavailable') throw err; // retried with the start step
    log?.warn({ conversation: conv.metadata.name, org: owner, code: isAgentyardError(err) ? err.code : 'error' }, 'organization skills could not be read; starting without them');
    return [];
  }
}
