// What middleware puts on ctx.state for the handlers after it. Typed once, here.
import type { Sandbox } from '../api/sandbox.ts';
import type { AppUser } from './db/app-db.ts';

declare module 'koa' {
  interface DefaultState {
    /** The authenticated caller (auth.ts); absent on the webhook routes. */
    user?: AppUser;
    /** Parsed, validated input (validate.ts); handlers cast to the schema's type. */
    body?: unknown;
    query?: unknown;
    params?: unknown;
    /** The sandbox whose session key authenticated a webhook call. */
    sandbox?: Sandbox;
    /** The owned conversation a nested router resolved from the path. */
    conversationId?: string;
  }
}

export type { AppUser };
