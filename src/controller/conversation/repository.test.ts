import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../api/conversation.ts';
import { cloneRequest, DEFAULT_GIT_HOSTS, gitHostsFromEnv } from './repository.ts';

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

  it('builds the clone request from the provider token secret; the URL carries no credential', () => {
    const made = cloneRequest(conv({ selectedRepository: 'acme/api', selectedBranch: 'dev', gitProvider: 'gitlab', gitUserName: 'A', gitUserEmail: 'a@b.c' }), { GITLAB_TOKEN: 'glpat-x', GITHUB_TOKEN: 'no' }, DEFAULT_GIT_HOSTS);
    expect(made).toEqual({
      request: { url: 'https://gitlab.com/acme/api.git', directory: 'api', branch: 'dev', authorization: `Basic ${Buffer.from('oauth2:glpat-x').toString('base64')}`, author_name: 'A', author_email: 'a@b.c' },
    });
    expect(cloneRequest(conv({ selectedRepository: 'acme/api.git' }), {}, DEFAULT_GIT_HOSTS)).toEqual({ request: { url: 'https://github.com/acme/api.git', directory: 'api' } });
    expect(cloneRequest(conv({ selectedRepository: 'acme/api', gitProvider: 'forgejo' }), {}, DEFAULT_GIT_HOSTS)).toHaveProperty('error');
  });
});
