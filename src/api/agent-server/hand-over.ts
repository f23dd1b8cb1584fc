// POST /api/agentyard/hand-over: an agentyard addition to the agent server. A warm-pool sandbox is
// started before anyone owns it, with a session key only the control plane knows and no model
// token. When a conversation start claims it, the controller hands it over: the agent server
// accepts only the new session key from then on (also for its event pushes), starts conversations
// with the sandbox's new model token, and seals secrets with the new key. The runtime restarts it
// with the same keys from the sandbox's Secret, so a restart after the hand-over changes nothing.
import Type, { type Static } from 'typebox';

export const HandOverRequest = Type.Object(
  {
    /** The only session key accepted from now on (X-Session-API-Key, sockets, event sink pushes). */
    session_key: Type.String({ minLength: 16, maxLength: 512 }),
    /** The model gateway token: the API key of the server's default model. */
    llm_api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    /** Seals persisted conversation secrets from now on (what OH_SECRET_KEY is at the next start). */
    secret_key: Type.Optional(Type.String({ minLength: 16, maxLength: 1024 })),
  },
  { additionalProperties: false },
);
export type HandOverRequest = Static<typeof HandOverRequest>;

export const HAND_OVER_PATH = '/api/agentyard/hand-over';
