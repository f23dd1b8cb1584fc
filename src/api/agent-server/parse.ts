// Parsing agent-server request bodies the way OpenHands does: defaults applied, unknown
// top-level fields dropped, 422 issues located under `body`.
import type { Static, TSchema } from 'typebox';
import { Invalid } from '../errors.ts';
import { parseValue } from '../events/validate.ts';
import { StartConversationRequest } from './conversation.ts';

/** Any request body: defaults applied, undeclared fields of lenient objects dropped, loc under `body`. */
export function parseBody<T extends TSchema>(schema: T, value: unknown): Static<T> {
  return parseValue(schema, value ?? {}, { prefix: ['body'], clean: true });
}

/** StartConversationRequest plus its cross-field rule: exactly one of agent, agent_settings, agent_profile_id. */
export function parseStartConversationRequest(value: unknown): StartConversationRequest {
  const req = parseBody(StartConversationRequest, value);
  const given = (['agent', 'agent_settings', 'agent_profile_id'] as const).filter((k) => req[k] != null);
  if (given.length !== 1) {
    throw new Invalid([
      {
        loc: ['body'],
        msg: 'Exactly one of agent, agent_settings or agent_profile_id must be given',
        type: 'value_error',
      },
    ]);
  }
  return req;
}
