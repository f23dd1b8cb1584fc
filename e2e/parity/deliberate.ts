// What the differential suite tolerates, keyed `<flow>.<key>` of e2e/parity/flows.ts. The suite fails
// on any difference listed in neither, and on an entry that no longer shows (so both lists stay true).

/** Differences that are deliberate: each says why ours is right for agentyard. */
export const DELIBERATE: Record<string, string> = {
  'security_toolshield_table.analyzer_shown':
    "The ToolShield guardrail's `llm.api_key` shows masked (`**********`), as the agent's own LLM key does: a key is set and kept. " +
    'OpenHands 1.58 shows null because it has lost the key: its request round trip stores the mask, which its LLM then drops, so ' +
    'its guardrail calls go out without a key (a real provider would refuse them; the scripted one does not check).',
  'acp_pause.statuses':
    'Pause stops an ACP turn at once: ours sends the ACP server session/cancel (its model call is cancelled, a tool call left ' +
    'open is closed as failed), records no answer for the paused turn, and the next message runs a new turn. OpenHands 1.58 ' +
    'pauses "between steps", and an ACP step is the whole turn: the turn goes on after the PauseEvent, its late answer is ' +
    'recorded as the FinishAction and the status jumps from paused to finished, and the message sent next does not run (the ' +
    'conversation is left paused with it unanswered). A user who pauses expects the agent to stop.',
  'acp_pause.finishes': "The same pause as acp_pause.statuses: ours records only the next turn's answer; OpenHands the paused turn's late answer.",
  'acp_pause.second_turn': 'The same pause as acp_pause.statuses: ours runs the message sent after the pause; OpenHands does not.',
  'acp_pause.end': 'The same pause as acp_pause.statuses: ours ends finished (the next turn ran); OpenHands is left paused.',
  'acp_turn.server_key_visible_to_acp':
    'An ACP server is sandbox code (it runs what the model asks): ours starts it with the sandbox\'s base environment and the ' +
    'conversation\'s own secrets only, as the terminal and MCP stdio servers start. OpenHands 1.58 hands it its whole process ' +
    'environment, so the agent (and anything a prompt injection makes it run) reads the agent server\'s session key ' +
    '(OH_SESSION_API_KEYS_0), OH_SECRET_KEY and any provider key the server was given: here its bash tool prints the session key.',
  'validation.bad_llm':
    'An `agent.llm` without `model` is valid here: the server takes the model from LLM_MODEL (OpenHands has no such default), ' +
    'and the controller and the model gateway start conversations with `llm: {}` on purpose. OpenHands answers 422.',
  'fork.with_agent':
    'A fork request naming an `agent` is refused (422 at body.agent): a fork keeps the source agent, and OpenHands 1.58 ' +
    '(no such field) silently ignores it, so the caller would believe another agent runs.',
  'fork.with_agent_locs': 'The 422 of fork.with_agent names body.agent; OpenHands answers 201 (no locations).',
  'rate_limit.update_keys':
    'While the provider\'s rate limit holds a model call back (429, waiting to retry), our agent server says so: the state update ' +
    '`rate_limited_until` (when the wait ends, then null), also in ConversationInfo, so the application can show the spec\'s ' +
    'RUNNING → PAUSED "due to rate limits". OpenHands 1.58 waits silently (its retry listener is wired to nothing), so a client ' +
    'cannot tell a throttled agent from a hung one. The execution status stays `running` on both; clients that do not know the key ' +
    'keep it in their state dict (the Python SDK\'s RemoteState) or ignore it.',
  'secrets_start_forms.value_only':
    'A start request whose secret is a bare `{"value": ...}` (no `kind`): both refuse it (422, as 1.58 and the 1.44 contract take ' +
    'only SecretSource objects there; the /secrets update alone coerces it). Ours locates each fault of the object, the missing ' +
    '`kind` (and `url` of a LookupSecret) and the `value` a SecretSource does not have, like every other 422 of ours; OpenHands ' +
    'answers one value_error at the secret.',
  'validation.bad_llm_locs': 'The same request as validation.bad_llm: accepted (201), so there are no 422 locations to compare.',
  'openai_gateway.bad_metadata_detail':
    'An X-OpenHands-Observability-Metadata header that is not JSON: both answer 422; ours names the header in a located issue ' +
    '(`loc: ["header", "X-OpenHands-Observability-Metadata"]`), like every other 422 of both servers, where OpenHands answers a bare ' +
    'sentence that a client reading `detail` as a list of issues cannot take apart.',
  'mcp_oauth.oauth_state_fields':
    'After an MCP server is authorized, OpenHands answers the access and refresh tokens in `oauth_state.tokens` (plain text ' +
    'without OH_SECRET_KEY) for the client to keep and send back in `auth.state`. Ours keeps them itself (sealed with ' +
    'OH_SECRET_KEY, so they survive a restart) and answers only what is not secret (the registered client without its ' +
    'secret, the expiry): a response passes through proxies, logs and browser tools, and the agent server already has to ' +
    'hold the tokens to use them. A later test or start of the same server uses the stored tokens (refreshed when expired).',
  'canvas_extensions.bad_install_detail':
    'A Canvas extension package whose manifest is invalid (here an entrypoint outside the package): both answer 422; ours names ' +
    'what is wrong as located issues (`loc: ["manifest", "entrypoint"]`), like every other 422 of both servers, where OpenHands ' +
    'answers one sentence ("Ensure the manifest is well-formed") for every fault, so the author cannot tell which field to fix.',
  'skills_install.no_skill_md_detail':
    'A skill source that holds no valid skill: both answer 422 with OpenHands\' sentence ("Invalid skill. Ensure the source contains ' +
    'a valid SKILL.md."); ours as a located issue (`loc: ["body", "source"]`) that goes on to say what is wrong (no SKILL.md, a name ' +
    'that does not match its directory, a link out of the package), like every other 422 of both servers, where OpenHands answers ' +
    'the bare sentence for every fault (as canvas_extensions.bad_install_detail).',
  'skills_git.refresh_invalid_detail':
    'A refresh whose source no longer holds the skill: both answer 422 with the same sentence and keep the installed copy; ours ' +
    'located at the skill named in the path (`loc: ["path", "skill_name"]`) with the reason, as skills_install.no_skill_md_detail.',
  'plugins_install.bad_name_detail':
    'A plugin whose name is not kebab-case: both answer 422 with OpenHands\' sentence; ours located (`loc: ["body", "source"]`) with ' +
    'the name found, as skills_install.no_skill_md_detail.',
  'plugins_fetch.unreachable_detail':
    'A plugin source that cannot be reached: both answer 502. Ours answers the detail the route documents, `{code: ' +
    '"source_unavailable", message}` (as its 422s are answered on both servers); OpenHands 1.58 routes every 5xx HTTPException ' +
    'through its generic error handler, so the client gets `{"detail": "Internal Server Error", "exception": "502: {...}"}` with the ' +
    'code only inside a Python repr string.',
  'settings_secrets.refusals':
    'A bad secret name (PUT, GET or DELETE) and a blank or redacted value: both answer 422 with the same sentence; ours as a located ' +
    'issue (`loc: ["body", "name"]`, `["path", "name"]`, `["body", "value"]`), like every other 422 of both servers, where OpenHands ' +
    'answers a bare string `detail` that a client reading `detail` as a list of issues cannot take apart.',
  'provider_connections.refusals':
    'An empty PATCH and `api_key: null` on a provider connection: both answer 422 with the same sentence; ours located (`["body"]`, ' +
    '`["body", "api_key"]`) as every other 422 of both servers, where OpenHands answers a bare string `detail` (as settings_secrets.refusals).',
  'settings_document.conversation_schema':
    "The conversation settings form has no `runtime` section (default_runtime, worktree_*, container_*): this agent server runs " +
    'every conversation in its own workspace (the sandbox is the runtime; no Docker or worktree runtimes), so these would be ' +
    'settings that change nothing, and PATCH refuses them (422) rather than store them unapplied.',
  'mcp_config_forms.mcp_servers_wrapper':
    "A regular agent's `mcp_config` in the `{\"mcpServers\": {...}}` form: ours takes it as well as 1.58's server map, because it is " +
    "the form of OpenHands 1.44 and of the clients generated from it (the official TypeScript client, which must drive this " +
    'server unmodified) and of Claude Code\'s .mcp.json. OpenHands 1.58 refuses it (422: it reads `mcpServers` as a server name). ' +
    'Each form is checked with its own version\'s fields (unknown fields refused in both, as 1.58 refuses them).',
  'mcp_config_forms.neither_command_nor_url':
    'An MCP server with neither `command` nor `url` in a start request: refused here (422 at the server), as in the settings ' +
    '(settings_document.mcp_without_command_or_url). OpenHands 1.58 starts the conversation and leaves the server out ' +
    'silently, so the agent runs without tools its user configured.',
  'secrets_encrypted.info_api_key':
    "After a start with `secrets_encrypted: true` the conversation's `agent.llm.api_key` reads `**********` on ours, as after " +
    'every create on both servers (a key is set, not shown); OpenHands 1.58 shows null there, which reads as "no key" though ' +
    'its model calls send the decrypted one (model_auth agrees on both).',
  'secret_lookup_remote.fetched_before_use':
    "A LookupSecret of another server's URL is fetched once, when it is given (start request, /secrets update), and then kept " +
    'like a sent value (masked, sealed with OH_SECRET_KEY), as ours already did for lookups of its own store; OpenHands 1.58 ' +
    'fetches it at each command that names it. Resolved at once, a URL that does not answer is reported to the client that ' +
    'gave it (secret_lookup_remote.refused_lookup_start) instead of surfacing as a missing variable inside a later run; the ' +
    'price is that a value rotated at the source reaches a conversation when the lookup is given again.',
  'secret_lookup_remote.refused_lookup_start':
    'A lookup whose URL answers non-2xx (or does not answer within 30 s, or redirects): ours refuses the request, 422 at ' +
    '`["body", "secrets", name]` with the status or the network error (never the value, the headers or the URL\'s query); ' +
    'OpenHands 1.58 accepts it, and each command naming the secret runs without the variable, the failure only in its log. ' +
    'Ours resolves once (secret_lookup_remote.fetched_before_use), so a silent failure would lose the secret for the ' +
    "conversation's life; the client learns it at once and can fix the URL or the credential.",
  'secrets_encrypted.foreign_token_start':
    'A start with `secrets_encrypted: true` carrying a token that another OH_SECRET_KEY made (or that was altered): ours refuses ' +
    'it (422 at the field, the token not repeated); OpenHands 1.58 logs a warning and sets that secret to null (an LLM key: the ' +
    'model is then called without one; an MCP header map keeps the ciphertext as the value), so the conversation starts with a ' +
    'missing or garbled credential and fails later, far from the cause.',
  'settings_document.masked_key_saved_back':
    'A settings form that saves back what GET showed it sends the masked key (`**********`): ours keeps the stored key, OpenHands ' +
    'drops it (api_key null, llm_api_key_is_set false), so saving an unrelated field silently unsets the model key. A client ' +
    'removes the key explicitly with `api_key: null`, on both.',
  'settings_document.mcp_without_command_or_url':
    'An MCP server with neither `command` nor `url` is refused (422) here; OpenHands stores it (201), and every client that builds an ' +
    'agent from the settings then gets a server it cannot start.',
  'llm_profiles.expose_plaintext':
    '`X-Expose-Secrets: plaintext` (or `encrypted`) on GET /api/profiles/{name}: OpenHands returns the stored API key; ours ' +
    'answers 403: secrets are never returned by agentyard (service rule), the key is used only where the profile sends it ' +
    '(switch_profile). `api_key_set` tells a client that one is stored.',
  'validate_profile.refused':
    "A draft whose key the provider refuses: both answer valid: false with LLMAuthenticationError, but OpenHands' message repeats " +
    "the provider's text with the key in it (its redaction knows a few key formats only); ours masks the draft's key in the message " +
    '(agentyard never returns a secret), so the last value of the row is false here and true there.',
  'switch_profile.llm':
    "After switch_profile the conversation's `agent.llm.api_key` reads `**********` on ours, as after create and switch_llm on " +
    'both servers (a key is set, not shown); OpenHands shows null there for a profile\'s LLM, which reads as "no key" though ' +
    'its next model call sends one (model_call agrees on both).',
  'agent_profile_materialize.resolved_settings_fields':
    "materialize's `resolved_settings` (present when valid) is the `agent` a launch from the profile starts the conversation " +
    'with (the shape of ConversationInfo.agent: llm, tools, agent_context, mcp_config, tool_concurrency_limit), built by the ' +
    "same code as the launch, secrets masked, its condenser and critic included (as the agent's `condenser` and `critic`). " +
    "OpenHands dumps its agent settings document instead: `verification` is our `critic`, its meta-profile routing fields are " +
    "here the routing tool's entry in `tools` (ClassifyAndSwitchLLMTool with the meta-profile, no LLM keys), and its " +
    'persona is folded into the system prompt suffix here, as the launch does. ' +
    'Model, masked key and tools agree (draft_settings).',
  'agent_profile_materialize.default_tools':
    'A profile naming no tools: OpenHands reports `browser_tool_set` unusable when its server has no browser, because its default ' +
    'tool set includes the browser. The default set a launch here gives (terminal, file editor, task tracker) has no browser, so ' +
    'no selected tool is unusable and the list is empty; both answer valid true with no errors.',
  'agent_profile_launch_applied.critic':
    'A profile with the critic on and no `critic_server_url`: OpenHands sends the trace, with the LLM profile\'s key as the ' +
    "credential, to its default classification service (All Hands' proxy), a third party the user did not name. Ours refuses " +
    'the launch (422) and materialize reports why (valid false): the critic needs the URL of the service that runs it. With a ' +
    'URL both preview the profile valid (critic_with_service); a launch here then scores the finish through that service ' +
    '(agent-profile-launch.test.ts).',
  'runtime_misc.desktop_url':
    'GET /api/desktop/url: OpenHands 1.58 has no desktop routes (404, the "wrong URL" answer); the servers before it answered ' +
    '503 with the desktop off, which is what the official TypeScript client (generated from 1.44, used unmodified against this ' +
    'server) expects and its integration tests accept. No remote desktop runs in an agentyard sandbox, so ours answers that 503 ' +
    'with a message saying so: the truth, in the shape its clients handle, where a 404 would read as a client bug.',
  'meta_profile_llms_inline.inline_keys_shown':
    "The routing tool's inline LLMs (agent_settings' `meta_profile_llms`) carry provider keys. Ours keeps them as it keeps the " +
    "agent's own key: sealed with the conversation's secrets (OH_SECRET_KEY), null in the stored request, `**********` in every " +
    'ConversationInfo. OpenHands 1.58 answers them in plain text in every ConversationInfo (GET, search, the create answer, ' +
    'whatever X-Expose-Secrets says) and writes them unencrypted into its base_state.json, so anyone who may list conversations ' +
    'reads the keys. The routing itself agrees (classifier and target calls with their keys, observation, usage buckets).',
  'meta_profile_llms_inline.bad_entries':
    'An inline LLM entry that is no LLM (no model, a bad field): both refuse the start (422). OpenHands 1.58 repeats the entry ' +
    'with its api_key in the error text (its redaction covers the `input` field, not the message built from it); ours never ' +
    'answers a secret.',
  'meta_profile_llms_inline.bad_entries_locs':
    'The same 422 as meta_profile_llms_inline.bad_entries: ours locates each fault at its entry and field ' +
    '(`["body", "agent_settings", "meta_profile_llms", "a", "model"]`), like every other 422 of both servers; OpenHands answers ' +
    'one value_error at `["body"]` whose text lists them.',
  'deferred_init.dormant_socket':
    'A WebSocket opened on a dormant server (before POST /api/init): refused on both. OpenHands 1.58 means "try again later" ' +
    '(it closes with 1013 before accepting), which its ASGI server turns into an HTTP 403 that reads as "your key is wrong"; ours ' +
    'answers the upgrade 503 with Retry-After, as it does while restoring its conversations, so a client retries rather than ' +
    'giving up on its credentials.',
  'managed_key_refresh.second_refused':
    'After a managed key refresh, ours keeps the current key for the conversation\'s later model calls; OpenHands 1.58 retries ' +
    'the refused call with a copy of its LLM and keeps the stale key, so every later call of the conversation is first refused ' +
    '(401) and the key fetched again: a refused call and a control-plane request per model call, for the life of the ' +
    'conversation. The second turn is otherwise the same on both (the events, the status, the call answered with the current key).',
  'managed_key_refresh.second_refresh_calls': 'The same kept key as managed_key_refresh.second_refused: ours asks the control plane once, OpenHands at each later call.',
  'managed_key_refresh.info_api_key':
    "A conversation's `agent.llm.api_key` reads `**********` on ours (a key is set, not shown), before and after a refresh, as " +
    'switch_profile.llm and secrets_encrypted.info_api_key argue; OpenHands 1.58 shows null in ConversationInfo for every ' +
    'conversation, which reads as "no key" though its model calls send one. Neither shows the stale or the refreshed key ' +
    '(keys_shown agrees on both: none).',
  'critic_settings.no_key':
    'A start whose `agent.critic` has no `api_key`: OpenHands 1.58 refuses it (422 at agent.critic.api_key); ours starts, the ' +
    "critic authenticating with the agent LLM's key. That is what 1.58 itself does when it builds the critic from settings " +
    "(build_critic: `critic_api_key`, else the LLM's key), and what an agent-profile launch here gives, so the critic of a plain " +
    'start works as the launched one. A key that is sent is used as 1.58 uses it (the same Bearer, critic_refinement.classify), ' +
    'sealed apart and shown null; a client that sends none is not refused for a key the server already holds.',
};

/**
 * Differences that are not built yet (issue #14): tolerated so that `make test` stays green while
 * they are open, and listed so that none goes unnoticed. Remove an entry when its work lands (the
 * suite then fails until it is removed).
 */
export const GAPS: Record<string, string> = {
  // None open.
};

/** Breaking differences of our OpenAPI document against the real one (see parity.test.ts), not closed yet. */
export const OPENAPI_GAPS: Record<string, string> = {
  // None left: the routes not built answer 501 with a message behind the session key
  // (src/agent-server/routes/not-implemented.ts).
};
