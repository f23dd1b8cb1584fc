// Organization and user configuration repositories (spec part 2, skill sources): `<owner>/.agents`
// of the selected repository's owner, and `<login>/.agents` of the owner's Git login (user setting
// git_login, also without a selected repository); `service-config` instead of `.agents` on hosts
// that forbid leading periods. Their skills are read by the sandbox's agent server (POST
// /api/skills with org_configs, each clone URL carrying the user's token for that configured host
// only) and handed to the new conversation in agent.agent_context.skills.
// Precedence for one name: organization < user < repository. The agent puts request skills over
// the project's own, so a name the conversation's working directory defines is left out here.
// A missing configuration repository is normal and gives no skills.
import type { OrgConfig, SkillsResponse } from '../../api/agent-server/skills.ts';
import type { Conversation, GitProvider } from '../../api/conversation.ts';
import { isAgentyardError } from '../../api/errors.ts';
import type { AgentServerClient } from '../../runtime/agent-server-client.ts';
import type { Logger } from '../../util/log.ts';
import { authenticatedUrl, configRepository, tokenSecretName, type GitSettings } from './repository.ts';
import { conversationWorkingDir } from './start-request.ts';

/** The configuration repositories of a conversation, lowest precedence first (the agent server merges later over earlier). */
export function configRepositories(conv: Conversation, secrets: Record<string, string>, git: GitSettings): OrgConfig[] {
  const out: OrgConfig[] = [];
  const add = (owner: string, provider: GitProvider) => {
    const base = git.hosts[provider];
    if (!base) return; // no configured host: nothing is cloned, no token goes anywhere
    const repo = configRepository(owner, provider, git);
    const url = authenticatedUrl(base, repo, provider, secrets[tokenSecretName(provider)]);
    if (out.some((c) => c.org_repo_url === url)) return; // the user's own repository selected: one clone
    out.push({ repository: conv.spec.selectedRepository ?? repo, provider, org_repo_url: url, org_name: owner });
  };
  const repo = conv.spec.selectedRepository;
  if (repo) add(repo.split('/')[0]!, conv.spec.gitProvider ?? 'github');
  const login = conv.spec.ownerGitLogin;
  if (login) add(login.login, login.provider);
  return out;
}

export async function orgConfigSkills(
  client: AgentServerClient,
  conv: Conversation,
  secrets: Record<string, string>,
  git: GitSettings,
  log?: Logger,
  /** Filled with the names a configuration repository defines both old-style and new-style (spec part 4 rule 6). */
  conflicts: NonNullable<SkillsResponse['conflicts']> = [],
): Promise<Record<string, unknown>[]> {
  const configs = configRepositories(conv, secrets, git);
  if (configs.length === 0) return [];
  const only = { load_public: false, load_user: false, load_project: false, load_org: false };
  try {
    const loaded = (await client.postJson('/api/skills', { ...only, load_org: true, org_configs: configs })) as SkillsResponse;
    conflicts.push(...(loaded.conflicts ?? []));
    const { skills } = loaded;
    if (skills.length === 0) return [];
    const project = (await client.postJson('/api/skills', { ...only, load_project: true, project_dir: conversationWorkingDir(conv) })) as SkillsResponse;
    const own = new Set(project.skills.map((s) => s.name));
    return skills.filter((s) => !own.has(s.name));
  } catch (err) {
    if (isAgentyardError(err) && err.code === 'Unavailable') throw err; // retried with the start step
    log?.warn({ conversation: conv.metadata.name, configs: configs.map((c) => c.org_name), code: isAgentyardError(err) ? err.code : 'error' }, 'configuration repository skills could not be read; starting without them');
    return [];
  }
}

/**
 * The names of the skills the agent server loads for the conversation itself: the user's (its
 * HOME, installed skills among them) and the working directory's, the two sources the start request
 * asks for (load_user_skills, load_project_skills).
 */
export async function sandboxSkillNames(client: AgentServerClient, conv: Conversation, log?: Logger): Promise<string[]> {
  const only = { load_public: false, load_user: true, load_project: true, load_org: false };
  try {
    const { skills } = (await client.postJson('/api/skills', { ...only, project_dir: conversationWorkingDir(conv) })) as SkillsResponse;
    return skills.map((s) => s.name);
  } catch (err) {
    if (isAgentyardError(err) && err.code === 'Unavailable') throw err; // retried with the start step
    log?.warn({ conversation: conv.metadata.name, code: isAgentyardError(err) ? err.code : 'error' }, "the user's and the working directory's skills could not be listed");
    return [];
  }
}
