// PREPARING_REPOSITORY: the selected repository is cloned in the sandbox (POST
// /api/agentyard/git/clone on its agent server) over HTTPS with the user's token for the host,
// the secret `<PROVIDER>_TOKEN` (stored secret or per-conversation secret, the latter winning).
// Which base URL serves each provider is installation configuration, so tests can point it at a
// local Git server. Spec part 2 rule 5: a token of another user goes in `secrets` without
// selected_repository, and the agent clones after the start.
import type { GitCloneRequest, GitCloneResponse } from '../../api/agent-server/git.ts';
import type { Conversation, GitProvider } from '../../api/conversation.ts';
import type { AgentServerClient } from '../../runtime/agent-server-client.ts';

/**
 * Providers with a host but no clone here: their repositories are only searched through the app
 * API (facade/git-providers). Bitbucket Data Center is always self-managed and an Azure DevOps
 * host names its organization (https://dev.azure.com/<organization>), so neither has a default.
 */
export type SearchOnlyProvider = 'bitbucket_data_center' | 'azure_devops';
export type GitHostProvider = GitProvider | SearchOnlyProvider;
export type GitHosts = Record<GitProvider, string | undefined> & Partial<Record<SearchOnlyProvider, string>>;
/** Every provider AGENTYARD_GIT_HOSTS may name. */
const HOST_PROVIDERS: readonly GitHostProvider[] = ['github', 'gitlab', 'bitbucket', 'forgejo', 'bitbucket_data_center', 'azure_devops'];
const CLONE_PROVIDERS: readonly GitProvider[] = ['github', 'gitlab', 'bitbucket', 'forgejo'];

export const DEFAULT_GIT_HOSTS: GitHosts = {
  github: 'https://github.com',
  gitlab: 'https://gitlab.com',
  bitbucket: 'https://bitbucket.org',
  forgejo: undefined,
};

/** The user name each host expects with a token as the password of HTTP basic auth. */
const BASIC_USER: Record<GitProvider, string> = { github: 'x-access-token', gitlab: 'oauth2', bitbucket: 'x-token-auth', forgejo: 'oauth2' };

/** Where repositories are cloned from, and what organization configuration repositories are called. */
export interface GitSettings {
  hosts: GitHosts;
  /** Providers whose hosts forbid a leading period in repository names: `service-config` there, `.agents` elsewhere (spec part 4). */
  noLeadingPeriod: ReadonlySet<GitProvider>;
}

export const DEFAULT_GIT_SETTINGS: GitSettings = { hosts: DEFAULT_GIT_HOSTS, noLeadingPeriod: new Set(['gitlab']) };

/** AGENTYARD_GIT_NO_LEADING_PERIOD: comma-separated providers (default gitlab); plus the hosts below. */
export function gitSettingsFromEnv(env: NodeJS.ProcessEnv): GitSettings {
  const hosts = gitHostsFromEnv(env);
  if (env.AGENTYARD_GIT_NO_LEADING_PERIOD === undefined) return { hosts, noLeadingPeriod: DEFAULT_GIT_SETTINGS.noLeadingPeriod };
  const list = env.AGENTYARD_GIT_NO_LEADING_PERIOD.split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of list) if (!(p in DEFAULT_GIT_HOSTS)) throw new Error(`AGENTYARD_GIT_NO_LEADING_PERIOD: unknown provider ${p}`);
  return { hosts, noLeadingPeriod: new Set(list as GitProvider[]) };
}

/** The organization (or user) configuration repository of a repository owner on a provider. */
export function configRepository(owner: string, provider: GitProvider, settings: GitSettings): string {
  return `${owner}/${settings.noLeadingPeriod.has(provider) ? 'service-config' : '.agents'}`;
}

/** A clone URL carrying the token, for the agent server's org skill loader (which never logs it). */
export function authenticatedUrl(base: string, repo: string, provider: GitProvider, token: string | undefined): string {
  const url = new URL(`${base}/${repo}.git`);
  if (token) {
    url.username = BASIC_USER[provider];
    url.password = token;
  }
  return url.toString();
}

/**
 * What a sandbox's agent server is told of the installation's GitHub host (its
 * /api/git/repositories/search asks that host's API with the user's token): nothing for github.com,
 * AGENTYARD_GIT_BASE_URL for a GitHub Enterprise Server, so the agent never searches github.com
 * with a token meant for the company's host.
 */
export function githubHostEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const github = gitHostsFromEnv(env).github;
  return github && github !== DEFAULT_GIT_HOSTS.github ? { AGENTYARD_GIT_BASE_URL: github } : {};
}

/**
 * AGENTYARD_GIT_BASE_URL: the github base URL (default https://github.com);
 * AGENTYARD_GIT_HOSTS: JSON object provider → base URL, for any provider. Bad values throw.
 */
export function gitHostsFromEnv(env: NodeJS.ProcessEnv): GitHosts {
  const hosts: GitHosts = { ...DEFAULT_GIT_HOSTS };
  const check = (name: string, url: unknown): string => {
    if (typeof url !== 'string' || !/^https?:\/\/[^/@\s]+(\/[^\s]*)?$/.test(url)) throw new Error(`${name}: expected an http(s) base URL without credentials, got ${JSON.stringify(url)}`);
    return url.replace(/\/+$/, '');
  };
  if (env.AGENTYARD_GIT_BASE_URL) hosts.github = check('AGENTYARD_GIT_BASE_URL', env.AGENTYARD_GIT_BASE_URL);
  if (env.AGENTYARD_GIT_HOSTS) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.AGENTYARD_GIT_HOSTS);
    } catch {
      throw new Error('AGENTYARD_GIT_HOSTS: expected a JSON object mapping github/gitlab/bitbucket/forgejo/bitbucket_data_center/azure_devops to base URLs');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('AGENTYARD_GIT_HOSTS: expected a JSON object');
    for (const [provider, url] of Object.entries(parsed)) {
      if (!HOST_PROVIDERS.includes(provider as GitHostProvider)) throw new Error(`AGENTYARD_GIT_HOSTS: unknown provider ${provider}`);
      hosts[provider as GitHostProvider] = check(`AGENTYARD_GIT_HOSTS.${provider}`, url);
    }
  }
  return hosts;
}

/** HTTP basic credentials for a token on a provider's host. */
export function basicAuthorization(provider: GitProvider, token: string): string {
  return `Basic ${Buffer.from(`${BASIC_USER[provider]}:${token}`).toString('base64')}`;
}

/** The configured provider whose base URL a repository URL is under, if any (tokens go only there). */
export function providerOfUrl(url: string, hosts: GitHosts): GitProvider | undefined {
  for (const provider of CLONE_PROVIDERS) {
    const base = hosts[provider];
    if (base && url.startsWith(`${base}/`)) return provider;
  }
  return undefined;
}

/** OpenHands' name for a provider's token (`{provider_type.name}_TOKEN`): GITLAB_TOKEN, AZURE_DEVOPS_TOKEN... */
export function tokenSecretName(provider: GitHostProvider): string {
  return `${provider.toUpperCase()}_TOKEN`;
}

/** Where a selected repository is cloned, relative to the sandbox workspace; the conversation works there. */
export function repositoryDirectory(repo: string): string {
  return repo.split('/')[1]!.replace(/\.git$/, '');
}

/** The clone request for a conversation, or a reason it cannot be made. */
export function cloneRequest(conv: Conversation, secrets: Record<string, string>, hosts: GitHosts): { request: GitCloneRequest } | { error: string } {
  const { spec } = conv;
  const repo = spec.selectedRepository!;
  const provider = spec.gitProvider ?? 'github';
  const base = hosts[provider];
  if (!base) return { error: `No Git host is configured for ${provider}; the administrator sets it in AGENTYARD_GIT_HOSTS` };
  const token = secrets[tokenSecretName(provider)];
  const directory = repositoryDirectory(repo);
  return {
    request: {
      url: `${base}/${repo.replace(/\.git$/, '')}.git`,
      directory,
      ...(spec.selectedBranch ? { branch: spec.selectedBranch } : {}),
      ...(token ? { authorization: `Basic ${Buffer.from(`${BASIC_USER[provider]}:${token}`).toString('base64')}` } : {}),
      ...(spec.gitUserName ? { author_name: spec.gitUserName } : {}),
      ...(spec.gitUserEmail ? { author_email: spec.gitUserEmail } : {}),
    },
  };
}

/** A clear, credential-free reason for a clone that did not happen; undefined when it did. */
export function cloneFailure(conv: Conversation, res: GitCloneResponse): string | undefined {
  const repo = conv.spec.selectedRepository!;
  const provider = conv.spec.gitProvider ?? 'github';
  switch (res.status) {
    case 'CLONED':
    case 'EXISTS':
      return undefined;
    case 'AUTH_FAILED':
      return `Cloning ${repo} failed: the Git host refused the credentials (${res.detail ?? 'authentication failed'}); store a valid ${tokenSecretName(provider)} secret or pass it in secrets`;
    case 'REPOSITORY_NOT_FOUND':
      return `Cloning ${repo} failed: the repository does not exist or ${tokenSecretName(provider)} has no access to it`;
    case 'BRANCH_NOT_FOUND':
      return `Cloning ${repo} failed: branch ${conv.spec.selectedBranch} does not exist`;
    case 'DIRECTORY_TAKEN':
      return `Cloning ${repo} failed: ${res.detail ?? 'the target directory is taken'}`;
    default:
      return `Cloning ${repo} failed: ${res.detail ?? 'unknown error'}`;
  }
}

export async function cloneInSandbox(client: AgentServerClient, request: GitCloneRequest): Promise<GitCloneResponse> {
  return (await client.postJson('/api/agentyard/git/clone', request)) as GitCloneResponse;
}
