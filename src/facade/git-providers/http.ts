// The HTTP calls every hosted-provider driver makes (GitLab, Bitbucket, Azure DevOps): one token,
// one configured base URL, JSON answers, and the errors OpenHands' HTTPClient derives from a
// provider's status codes (401 → "Invalid <provider> token", answered 403 here as the forgejo
// driver does: OpenHands' web app logs out on a 401). No redirect is followed, so a token never
// leaves the configured host; no error carries the token or the host's body.
import { BadGateway, Forbidden } from '../../api/errors.ts';
import type { FacadeDeps } from '../deps.ts';
import { fetchFailure } from '../../util/fetch-failure.ts';

export interface HostAnswer {
  /** The parsed JSON body, or null (404, empty or not JSON). */
  body: any;
  status: number;
  headers: Headers;
}

export interface ProviderHttpOptions {
  /** The provider's name in messages and logs ("gitlab"). */
  provider: string;
  /** The Authorization header the host expects for the token. */
  authorization: string;
  /** Extra headers on every call. */
  headers?: Record<string, string>;
}

export class ProviderHttp {
  private readonly d: FacadeDeps;
  private readonly opts: ProviderHttpOptions;
  constructor(d: FacadeDeps, opts: ProviderHttpOptions) {
    this.d = d;
    this.opts = opts;
  }

  /**
   * A call to `url` (absolute, under the configured base: callers build it from the base or take
   * a `next` link the host gave, checked by sameOrigin). 404 answers `body: null`; 401 and 403
   * throw Forbidden; other failures BadGateway.
   */
  async call(method: 'GET' | 'POST', url: URL, body?: unknown): Promise<HostAnswer> {
    const { provider } = this.opts;
    const path = url.pathname;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: this.opts.authorization, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...this.opts.headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: 'manual',
        signal: AbortSignal.timeout(20_000),
      });
    } catch (err) {
      this.d.log?.warn({ host: url.origin, path, err: fetchFailure(err) }, `${provider} API unreachable`);
      throw new BadGateway(`The ${provider} host ${url.origin} could not be reached (${fetchFailure(err, 20_000)})`);
    }
    const text = await res.text();
    if (res.status === 401) throw new Forbidden(`Invalid ${provider} token`);
    if (res.status === 403) throw new Forbidden(`The ${provider} host refused this token access to ${path} (a scope or permission it lacks?)`);
    if (res.status === 404) return { body: null, status: 404, headers: res.headers };
    if (res.status === 429) throw new BadGateway(`${provider} API rate limit exceeded`);
    // Azure DevOps answers an unauthenticated call with a 203 sign-in page or a 302 to it.
    if (res.status === 203 || (res.status >= 300 && res.status < 400)) throw new Forbidden(`Invalid ${provider} token`);
    if (!res.ok) {
      this.d.log?.warn({ host: url.origin, path, status: res.status }, `${provider} API error`);
      throw new BadGateway(`The ${provider} host ${url.origin} answered ${res.status} to ${path}`);
    }
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      this.d.log?.warn({ host: url.origin, path, status: res.status }, `${provider} API answered something other than JSON`);
      throw new BadGateway(`The ${provider} host ${url.origin} answered ${path} with something other than JSON`);
    }
    return { body: parsed, status: res.status, headers: res.headers };
  }

  get(url: URL): Promise<HostAnswer> {
    return this.call('GET', url);
  }
}

/** `base` + `path` with query parameters (undefined ones left out). */
export function urlOf(base: string, path: string, params: Record<string, string | number | boolean | undefined> = {}): URL {
  const url = new URL(`${base.replace(/\/+$/, '')}${path}`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

/** A link the host gave (a page's `next`) is followed only when it stays on the configured host. */
export function sameOrigin(base: string, link: string): URL | null {
  const url = URL.parse(link);
  const root = new URL(base);
  return url && url.origin === root.origin && url.pathname.startsWith(root.pathname.replace(/\/+$/, '')) ? url : null;
}
