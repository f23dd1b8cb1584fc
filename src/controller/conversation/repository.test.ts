import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../api/conversation.ts';
import { authenticatedUrl, cloneRequest, configRepository, DEFAULT_GIT_HOSTS, DEFAULT_GIT_SETTINGS, githubHostEnv, gitHostsFromEnv, gitSettingsFromEnv } from './repository.ts';

const conv = (spec: Conversation['spec']): Conversation => ({ apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: 'c' }, spec }) as Conversation;

describe('Git hosts and clone requests', () => {
  it('reads the host base URLs from the environment and refuses bad ones', () => {
    expect(gitHostsFromEnv({})).toEqual(DEFAULT_GIT_HOSTS);
    expect(gitHostsFromEnv({ AGENTYARD_GIT_BASE_URL: 'http://127.0.0.1:9/' }).github).toBe('http://127.0.0.1:9');
    expect(gitHostsFromEnv({ AGENTYARD_GIT_HOSTS: '{"forgejo":"https://code.example.org"}' }).forgejo).toBe('https://code.example.org');
    expect(() => gitHostsFromEnv({ AGENTYARD_GIT_BASE_URL: 'https://user:pw@github.com' })).toThrow(/AGENTYARD_GIT_BASE_URL/);
    expect(() => gitHostsFromEnv({ AGENTYARD_GIT_HOSTS: '{"svn":"https://x"}' })).toThrow(/unknown provider svn/);
    expect(() => gitHostsFromEnv({ AGENTYARD_GIT_HOSTS: 'nope' })).toThrow(/AGENTYARD_GIT_HOSTS/);
  });

  it("tells sandboxes' agent servers a GitHub Enterprise host, and nothing for github.com", () => {
    expect(githubHostEnv({})).toEqual({});
    expect(githubHostEnv({ AGENTYARD_GIT_HOSTS: '{"github":"https://github.com/"}' })).toEqual({});
    expect(githubHostEnv({ AGENTYARD_GIT_HOSTS: '{"github":"https://ghe.corp.example"}' })).toEqual({ AGENTYARD_GIT_BASE_URL: 'https://ghe.corp.example' });
    expect(githubHostEnv({ AGENTYARD_GIT_BASE_URL: 'http://127.0.0.1:9' })).toEqual({ AGENTYARD_GIT_BASE_URL: 'http://127.0.0.1:9' });
  });

  it('builds the clone request from the provider token secret; the URL carries no credential', () => {
    const made = cloneRequest(conv({ selectedRepository: 'acme/api', selectedBranch: 'dev', gitProvider: 'gitlab', gitUserName: 'A', gitUserEmail: 'a@b.c' }), { GITLAB_TOKEN: 'glpat-x', GITHUB_TOKEN: 'no' }, DEFAULT_GIT_HOSTS);
    expect(made).toEqual({
      request: { url: 'https://gitlab.com/acme/api.git', directory: 'api', branch: 'dev', authorization: `Basic ${Buffer.from('oauth2:glpat-x').toString('base64')}`, author_name: 'A', author_email: 'a@b.c' },
    });
    expect(cloneRequest(conv({ selectedRepository: 'acme/api.git' }), {}, DEFAULT_GIT_HOSTS)).toEqual({ request: { url: 'https://github.com/acme/api.git', directory: 'api' } });
    expect(cloneRequest(conv({ selectedRepository: 'acme/api', gitProvider: 'forgejo' }), {}, DEFAULT_GIT_HOSTS)).toHaveProperty('error');
  });

  it('names configuration repositories .agents, or service-config where leading periods are forbidden', () => {
    expect(configRepository('acme', 'github', DEFAULT_GIT_SETTINGS)).toBe('acme/.agents');
    expect(configRepository('acme', 'gitlab', DEFAULT_GIT_SETTINGS)).toBe('acme/service-config');
    const custom = gitSettingsFromEnv({ AGENTYARD_GIT_NO_LEADING_PERIOD: 'forgejo' });
    expect(configRepository('acme', 'forgejo', custom)).toBe('acme/service-config');
    expect(configRepository('acme', 'gitlab', custom)).toBe('acme/.agents');
    expect(() => gitSettingsFromEnv({ AGENTYARD_GIT_NO_LEADING_PERIOD: 'cvs' })).toThrow(/unknown provider cvs/);
    expect(authenticatedUrl('https://gitlab.com', 'acme/service-config', 'gitlab', 't0k')).toBe('https://oauth2:t0k@gitlab.com/acme/service-config.git');
    expect(authenticatedUrl('https://github.com', 'acme/.agents', 'github', undefined)).toBe('https://github.com/acme/.agents.git');
  });
});
