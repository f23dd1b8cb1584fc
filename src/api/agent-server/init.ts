// POST /api/init (OpenHands 1.58's init_router.py): a server started dormant (OH_DEFERRED_INIT) is
// given its user's configuration, as a warm pool pre-starts servers before a user is matched. Field
// names and limits are 1.58's InitRequest (unknown fields refused); what this server does with each
// is said by its description.
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

const NOT_TAKEN = 'Not taken by this agent server (a value other than null is refused with 422).';

export const InitRequest = Type.Object(
  {
    session_api_keys: Nullable(Type.Array(Type.String(), { description: 'The session keys every later /api request must carry (X-Session-API-Key); none empty. Absent: the keys the server started with.' })),
    secret_key: Nullable(Type.String({ description: 'Seals what the server persists (as OH_SECRET_KEY); blank = unset. Absent: the key the server started with, else the first session key.' })),
    previous_secret_keys: Nullable(Type.Array(Type.String(), { description: 'Earlier secret keys (as OH_PREVIOUS_SECRET_KEYS): they only open what they sealed, which is sealed again with secret_key before the server serves.' })),
    conversations_path: Nullable(Type.String({ description: "Where the server keeps its data (this server keeps conversations, events, settings and profiles in one database there: 1.58's conversations and settings directory). Absent: the data directory it started with." })),
    bash_events_dir: Nullable(Type.String({ description: `${NOT_TAKEN} Bash events are kept in the database under conversations_path.` })),
    conversation_worktree_root: Nullable(Type.String({ description: `${NOT_TAKEN} A conversation's worktree is made beside its persistence directory.` })),
    webhooks: Nullable(Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: `${NOT_TAKEN} Events are pushed to AGENTYARD_EVENT_SINK_URL.` })),
    web_url: Nullable(Type.String({ description: `${NOT_TAKEN} The server is served at the root path.` })),
    allow_cors_origins: Nullable(Type.Array(Type.String(), { description: 'Origins added to those allowed to open Canvas App backend sessions (OH_ALLOW_CORS_ORIGINS).' })),
    max_concurrent_runs: Nullable(Type.Integer({ minimum: 1, description: 'Conversations running at once before the OpenAI-compatible gateway answers 429 (OH_MAX_CONCURRENT_RUNS).' })),
    env: Nullable(Type.Record(Type.String(), Type.String(), { description: "Set in the server's environment before its services start (credentials its tools read, e.g. GITHUB_TOKEN); existing values are overwritten." })),
    telemetry: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: `${NOT_TAKEN} This server sends no product analytics.` })),
  },
  { additionalProperties: false },
);
export type InitRequest = Static<typeof InitRequest>;

/** The InitRequest fields this server does not take: given (not null), they are refused where they stand. */
export const INIT_FIELDS_NOT_TAKEN = ['bash_events_dir', 'conversation_worktree_root', 'webhooks', 'web_url', 'telemetry'] as const;

export const InitState = Type.Union([Type.Literal('dormant'), Type.Literal('initializing'), Type.Literal('ready')]);
export type InitState = Static<typeof InitState>;

/** GET and POST /api/init: the state, and the error of the last failed attempt (the state back to dormant). */
export const InitStatus = Type.Object({ state: InitState, error: Type.Union([Type.String(), Type.Null()]) });
export type InitStatus = Static<typeof InitStatus>;
