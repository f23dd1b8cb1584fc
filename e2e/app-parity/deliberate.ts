// What the side-by-side suite tolerates, keyed `<flow>.<key>` of e2e/app-parity/flows.ts. The suite
// fails on any difference listed in neither, and on an entry that no longer shows (so both lists stay true).

/** Differences that are deliberate: each says why ours is right for agentyard. */
export const DELIBERATE: Record<string, string> = {
  'auth.bearer':
    'API keys are sent as Authorization: Bearer (spec part 5), the standard header every HTTP client, proxy and log scrubber knows; ' +
    'the OSS OpenHands app takes its one shared key in X-Session-API-Key only (its SaaS takes Bearer too).',
  'auth.session_header':
    'X-Session-API-Key carries a sandbox\'s session key here (agent servers, webhooks), never a user\'s API key: one header, one ' +
    'kind of secret, so a sandbox key can never be taken for a user and the reverse. OpenHands OSS takes its user key there.',
  'read.malformed':
    'A malformed conversation id in a batch get is a 422 with the field path (query.ids.<position>), the answer FastAPI gives a ' +
    'malformed start-task id on the route beside it and what a generated client parses; OpenHands answers this route with a 400 ' +
    'and a prose detail.',
  'read.malformed_locs': 'As read.malformed: the 422 names query.ids.0; the 400 of OpenHands has no locations.',
  'events.malformed':
    'Event ids are free strings in the SDK event model (and a hostile sandbox may record any id), so an id that matches no event ' +
    'is a null in the aligned list, like any unknown id. OpenHands parses it as a UUID and answers 500 (an uncaught ValueError).',
  'pause_resume.record_execution_status':
    'The record keeps the last execution status the agent server reported while its sandbox is paused ("finished"); OpenHands ' +
    'reads it live from the agent server and so shows null whenever the sandbox is not RUNNING. sandbox_status says PAUSED on both.',
  'pause_resume.send_paused':
    'A message to a conversation whose sandbox is paused is taken (200): the sandbox resumes and the message is delivered when it ' +
    'runs (spec part 3), nothing is lost and the client needs no resume-then-retry dance. OpenHands answers 409 "resume it first".',
  'start.title_calls':
    'Ours titles a conversation from the first line of its first message, with no model call; OpenHands asks the model for a title ' +
    'beside the agent\'s first call (a second paid call per conversation, and the title changes under the user a moment later).',
  'start.event_fields':
    'Events are served as the agent server serves them, without the fields whose value is null (OpenHands\' exclude_none form), so ' +
    'one parser reads both; OpenHands\' app store writes them out as null (parent_id, sender, critic_result, llm_response_id). ' +
    'A client of its models reads an absent optional field as null.',
  'stream_start.bad':
    'A pending message whose body does not validate is a 422 with the field paths, as every other body here; OpenHands answers ' +
    'this route with a 400 and a prose detail (its other routes answer 422).',
  'stream_start.bad_locs': 'As stream_start.bad: the 422 names body.content; the 400 of OpenHands has no locations.',
  'delete.again':
    'Deletes are idempotent: deleting a conversation that is already gone answers 200 {success: true}, so a client that retries ' +
    'after a lost answer or a timeout sees success (spec part 2); OpenHands answers the second delete with 404.',
  'delete.events_after':
    'A deleted conversation is gone with its events: reading them answers 404 like any unknown conversation. OpenHands deletes ' +
    'the record but keeps serving its event log to anyone who has the id (and never frees its storage).',
  'start.events':
    'StreamingDeltaEvents are streamed live, on the conversation socket (send_message.live compares them), and are not written ' +
    'into the durable event log: the SDK defines them as "not part of the durable conversation record" (openhands/sdk/event/' +
    'streaming_delta.py) and its agent server never persists them; OpenHands\' app log holds them only because its webhook ' +
    'forwards every socket event, one stored event per token, which a replay then has to skip.',
  'stream_start.events': 'As start.events.',
  'send_message.added': 'As start.events.',
  'start_fields.record':
    'public sent in a start request is kept and shown (public: true), as every other field of the request; OpenHands 1.11 ' +
    'accepts it and drops it (the record says null until a PATCH sets it).',
  'start_fields.id_taken':
    'A conversation_id that is already taken is refused at once (409, "choose another"): one id, one conversation. OpenHands ' +
    'starts a second conversation under the same id and answers READY.',
  'delete.malformed':
    'An id that is no UUID names no conversation: 404, the answer every conversation route here gives an id it does not know; ' +
    'OpenHands answers this route (only) with a 400 and a prose detail.',
  'git_search.bad_token':
    'A forgejo token the host refuses is a 422 naming body.provider_tokens.forgejo.token: the request is what is wrong, and the ' +
    'caller\'s own credentials are fine. OpenHands answers 401, which its own web app and any client read as "your session ended" ' +
    '(OpenHands\' git routes answer 403 for a missing token for that very reason).',
  'git_search.repos_page2':
    'Pages are exact windows of the host\'s list: page 2 at limit 2 is items 3 and 4. OpenHands asks the host for limit+1 items per ' +
    'page but numbers pages by that size, so page 2 starts at item 4 and item 3 is never shown to the client (a repository that ' +
    'cannot be picked). Page 1 is the same request and answer on both.',
  'git_search.query_page2':
    'A repository search pages too: next_page_id leads to the next matches. OpenHands gives out a next_page_id but never passes the ' +
    'page to the host, so following it answers the first page again, forever.',
  'git_search.branches_page2': 'As git_search.repos_page2, for branches: OpenHands never shows every (limit+1)th branch.',
  'git_search.branch_query_page2':
    'The next_page_id a branch search gives out works: page 2 of the matches. OpenHands gives one out and then refuses it (400 ' +
    '"Pagination not yet supported for branch search queries").',
  'git_search.github':
    'A search of a provider the caller has no token for (here github, with only a forgejo token) is the 403 "Git provider token ' +
    'required" OpenHands gives when there is no token at all. OpenHands answers 500 (an uncaught KeyError).',
  'github_search.bad_token':
    'As git_search.bad_token, for a github token GitHub refuses ("Bad credentials"): a 422 naming body.provider_tokens.github.token, ' +
    'not the 401 that reads as "your session ended".',
  'github_search.pushed_at':
    'Repositories carry GitHub\'s pushed_at (the field is in the shared Repository model and the forgejo search fills it); ' +
    'OpenHands 1.11 leaves it null for GitHub, so a client cannot sort or show "last pushed" for GitHub repositories.',
  'gitlab_search.bad_token': 'As git_search.bad_token, for a gitlab token: a 422 naming body.provider_tokens.gitlab.token, where OpenHands answers 401.',
  'gitlab_search.installations':
    'The same 400 with the provider as clients name it ("Provider gitlab doesn\'t support installations"); OpenHands formats its ' +
    'enum member into the text ("Provider ProviderType.GITLAB ...").',
  'gitlab_search.repos_page2': 'As git_search.repos_page2, for GitLab projects: OpenHands never shows every (limit+1)th project.',
  'gitlab_search.query':
    'A project search is ordered as sort_order says, by stars when it says nothing (the route\'s documented default): GitLab ' +
    'is asked for order_by=star_count, which the Link header of the host\'s page shows. OpenHands sends order_by=last_activity_at ' +
    'whatever sort_order is, so stars-desc and updated-asc answer the same order.',
  'gitlab_search.query_page2': 'As git_search.query_page2: OpenHands answers the first page of a GitLab search again, forever.',
  'gitlab_search.branches_page2': 'As git_search.repos_page2, for GitLab branches.',
  'gitlab_search.branch_query_page2': 'As git_search.branch_query_page2: the next page of a GitLab branch search works; OpenHands refuses it (400).',
};

/** Differences not built yet: tolerated so that `make test` stays green, listed so that none goes unnoticed. */
export const GAPS: Record<string, string> = {};
