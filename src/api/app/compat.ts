// Schemas of the OpenHands app-API routes agentyard serves for its clients beyond spec part 2:
// sandbox specs, model and provider listings, pending messages.
import Type, { type Static, type TSchema } from 'typebox';
import { ImageContent, TextContent } from '../events/index.ts';

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const STRICT = { additionalProperties: false } as const;

const Quantities = Type.Record(Type.String(), Type.String());
/**
 * OpenHands' SandboxSpecInfo (id, command, created_at, initial_env, working_dir) plus what a
 * conversation's sandbox starts from here: the runtime, the image and the resources.
 */
export const SandboxSpecInfo = Type.Object({
  id: Type.String({ description: 'The value POST /api/v1/sandboxes?sandbox_spec_id= takes' }),
  runtime: Type.Union([Type.Literal('process'), Type.Literal('kubernetes')], { description: 'process: a local process sandbox (agentyard up); kubernetes: a Pod' }),
  image: Nullable(Type.String({ description: 'Container image (kubernetes); null for process sandboxes, which run on the host' })),
  command: Nullable(Type.Array(Type.String())),
  created_at: Type.String({ description: 'ISO 8601, UTC: when this server read its configuration' }),
  initial_env: Type.Record(Type.String(), Type.String()),
  working_dir: Type.String({ description: 'Where conversations work in the sandbox' }),
  resources: Nullable(Type.Object({ requests: Type.Optional(Quantities), limits: Type.Optional(Quantities) }, { description: 'Kubernetes requests and limits of the agent-server container' })),
});
export type SandboxSpecInfo = Static<typeof SandboxSpecInfo>;

export const ModelInfo = Type.Object({
  id: Type.String({ description: 'litellm-style model name, as llm_model takes it' }),
  provider: Type.String(),
  is_default: Type.Boolean(),
});
export const ProviderInfo = Type.Object({ id: Type.String(), models: Type.Array(Type.String()) });

export const ListQuery = Type.Object({
  query: Type.Optional(Type.String({ description: 'Substring the id must contain' })),
  page_id: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
});
export type ListQuery = Static<typeof ListQuery>;

/** POST /api/v1/conversations/{id}/pending-messages (OpenHands' PendingMessageRequest). */
export const PendingMessageRequest = Type.Object(
  {
    role: Type.Optional(Type.Literal('user', { default: 'user' })),
    content: Type.Array(Type.Union([TextContent, ImageContent]), { minItems: 1 }),
  },
  STRICT,
);
export type PendingMessageRequest = Static<typeof PendingMessageRequest>;
export const PendingMessageResponse = Type.Object({
  id: Type.String(),
  queued: Type.Boolean({ description: 'false: the conversation was ready and nothing was waiting, so the message went to the agent at once' }),
  position: Type.Integer({ minimum: 0, description: 'Place in the queue, 1 = next; 0 when delivered at once' }),
});

/**
 * OpenHands app-API routes agentyard does not build (yet): each answers 501 with the reason, so a
 * client learns what is missing instead of a 404 that reads like a wrong address.
 */
export interface NotBuiltRoute {
  method: 'get' | 'post' | 'delete';
  path: string;
  reason: string;
}
// The git searches (/api/v1/git/*/search) were listed here until they were built (src/facade/git-
// providers/); providers without a driver there answer 501, per provider.
export const NOT_BUILT_ROUTES: NotBuiltRoute[] = [];
