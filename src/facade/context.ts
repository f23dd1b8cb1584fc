// What every route factory gets: the deps (with a logger) and the shared activity recorder.
import type { Context } from 'koa';
import type { Logger } from '../util/log.ts';
import type { ActivityRecorder } from './activity.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import type { OidcClient } from './login/oidc.ts';
import './state.ts';

export interface Facade {
  d: FacadeDeps & { log: Logger };
  activity: ActivityRecorder;
  /** The OpenID Connect relying party, when login is configured (deps.login). */
  oidc?: OidcClient;
}

/** The authenticated caller; auth.ts guarantees one on every non-webhook route. */
export function userOf(ctx: Context): AppUser {
  return ctx.state.user!;
}

/** Validated input placed by validate.ts, typed as the schema the route declared. */
export function input<Q = unknown, B = unknown, P = unknown>(ctx: Context): { query: Q; body: B; params: P } {
  return { query: ctx.state.query as Q, body: ctx.state.body as B, params: ctx.state.params as P };
}
