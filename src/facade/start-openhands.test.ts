// The rest of OpenHands' AppConversationStartRequest over HTTP: each field accepted with the
// meaning it has there, or stored and said to change nothing (unapplied_fields).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { agentServerStartRequest, PLAN_INSTRUCTION } from '../controller/conversation/start-request.ts';
import { makeSandbox, NS, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

const hello = { role: 'user', content: [{ type: 'text', text: 'hello' }] };
const CHOSEN = '3f1c0c2a-5b8e-4d0f-9a1b-2c3d4e5f6a7b';
const CHOSEN_HEX = CHOSEN.replaceAll('-', '');

describe('OpenHands start request fields', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness({ capacity: 4 })));
  afterEach(() => h.close());

  const start = (body: Record<string, unknown>, key = h.alice.key) => h.call('POST', '/api/v1/app-conversations', { key, body });
  const record = async (id: string, key = h.alice.key) => (await h.call('GET', `/api/v1/app-conversations?ids=${id}`, { key })).body[0];

  it('accepts a full OpenHands client request unchanged and shows every field', async () => {
    const r = await start({
      initial_message: hello,
      conversation_id: CHOSEN,
      llm_model: 'litellm_proxy/claude-sonnet-4-5',
      agent_type: 'plan',
      system_message_suffix: 'Answer in French.',
      trigger: 'openhands_api',
      pr_number: [12, 13],
      public: true,
      processors: [{ kind: 'SetTitleCallbackProcessor' }],
      agent_profile_id: 'fast',
    });
    expect(r.status).toBe(200);
    expect(r.body.request).toMatchObject({
      conversation_id: CHOSEN_HEX,
      llm_model: 'litellm_proxy/claude-sonnet-4-5',
      agent_type: 'plan',
      system_message_suffix: 'Answer in French.',
      trigger: 'openhands_api',
      pr_number: [12, 13],
      public: true,
      processors: [{ kind: 'SetTitleCallbackProcessor' }],
      agent_profile_id: 'fast',
    });
    expect(Object.keys(r.body.unapplied_fields).sort()).toEqual(['agent_profile_id', 'processors', 'public']);
    const conv = await h.store.get(ConversationKind, NS, CHOSEN_HEX);
    expect(conv?.spec).toMatchObject({ llmModel: 'litellm_proxy/claude-sonnet-4-5', agentType: 'plan', systemMessageSuffix: 'Answer in French.' });
    const rec = await record(CHOSEN);
    expect(rec).toMatchObject({
      id: CHOSEN_HEX,
      llm_model: 'litellm_proxy/claude-sonnet-4-5',
      agent_kind: 'openhands',
      agent_type: 'plan',
      trigger: 'openhands_api',
      pr_number: [12, 13],
      public: true,
      parent_conversation_id: null,
      sub_conversation_ids: [],
    });
    expect(rec.unapplied_fields.processors).toMatch(/no server-side event callbacks/);

    // What the controller sends the agent server: the model and the suffix (plan instruction first).
    const req = agentServerStartRequest(conv!, {}, { model: 'default-model', baseUrl: 'http://gw/v1', apiKey: 'k' }) as any;
    expect(req.agent.llm).toEqual({ model: 'litellm_proxy/claude-sonnet-4-5', base_url: 'http://gw/v1', api_key: 'k', stream: true });
    expect(req.agent.agent_context.system_message_suffix).toBe(`${PLAN_INSTRUCTION}\n\nAnswer in French.`);
  });

  it('leaves the model and prompt alone when the request does not set them', async () => {
    const id = await startConversationId(h, { initial_message: hello });
    const conv = await h.store.get(ConversationKind, NS, id);
    const req = agentServerStartRequest(conv!, {}, { model: 'default-model' }) as any;
    expect(req.agent.llm).toEqual({ model: 'default-model', stream: true });
    // No prompt fields of the request's own; only the skill-loading flags every start sends (1.58 loads neither by default).
    expect(req.agent.agent_context).toEqual({ load_user_skills: true, load_project_skills: true });
    expect((await record(id)).agent_type).toBe('default');
    expect((await record(id)).unapplied_fields).toEqual({});
  });

  it('refuses a caller-chosen id that is not a UUID (422 at the field) or is taken (409), also by someone else or after delete', async () => {
    const bad = await start({ conversation_id: 'not-a-uuid' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'conversation_id']);

    expect((await start({ conversation_id: CHOSEN_HEX })).status).toBe(200);
    const again = await start({ conversation_id: CHOSEN });
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).toContain('taken');
    expect((await start({ conversation_id: CHOSEN }, h.bob.key)).status).toBe(409);

    const other = '0123456789abcdef0123456789abcdef';
    expect((await start({ conversation_id: other })).status).toBe(200);
    expect((await h.call('DELETE', `/api/v1/app-conversations/${other}`)).status).toBe(200);
    expect((await start({ conversation_id: other })).status).toBe(409);
    expect((await h.store.list(ConversationKind, NS)).items).toHaveLength(1);
  });

  it('a sub-conversation: parent must be the caller own; inherits repository, model and running sandbox; lists both ways', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:9' });
    const parent = await startConversationId(h, { initial_message: hello, selected_repository: 'acme/api', selected_branch: 'main', llm_model: 'm-parent' });
    await setStartTask(h.store, parent, 'READY', 'sb-1');

    const foreign = await start({ parent_conversation_id: parent }, h.bob.key);
    expect(foreign.status).toBe(404);
    const unknown = await start({ parent_conversation_id: CHOSEN });
    expect(unknown.status).toBe(404);

    const child = await startConversationId(h, { initial_message: hello, parent_conversation_id: parent });
    const conv = await h.store.get(ConversationKind, NS, child);
    expect(conv!.spec).toMatchObject({ parentConversation: parent, selectedRepository: 'acme/api', selectedBranch: 'main', llmModel: 'm-parent', sandboxName: 'sb-1' });

    expect((await record(child)).parent_conversation_id).toBe(parent);
    expect((await record(parent)).sub_conversation_ids).toEqual([child]);
    const search = await h.call('GET', '/api/v1/app-conversations/search');
    expect(search.body.items.map((c: { id: string }) => c.id)).toEqual([parent]);
    const all = await h.call('GET', '/api/v1/app-conversations/search?include_sub_conversations=true');
    expect(all.body.items.map((c: { id: string }) => c.id).sort()).toEqual([parent, child].sort());
    expect((await h.call('GET', '/api/v1/app-conversations/count')).body).toBe(1);

    // Deleting the parent takes the sub-conversation with it; both read as deleted (a repeat is 200).
    const grandchild = await startConversationId(h, { parent_conversation_id: child });
    expect((await h.call('DELETE', `/api/v1/app-conversations/${parent}`)).status).toBe(200);
    expect((await h.store.list(ConversationKind, NS)).items).toEqual([]);
    for (const id of [child, grandchild]) expect((await h.call('DELETE', `/api/v1/app-conversations/${id}`)).status).toBe(200);
  });

  it('a suggested task writes the initial message, repository and trigger; with an initial message it is a 422 on both', async () => {
    const task = { git_provider: 'github', task_type: 'FAILING_CHECKS', repo: 'acme/api', issue_number: 42, title: 'Bump deps' };
    const both = await start({ initial_message: hello, suggested_task: task });
    expect(both.status).toBe(422);
    expect(both.body.detail.map((i: { loc: string[] }) => i.loc)).toEqual([
      ['body', 'suggested_task'],
      ['body', 'initial_message'],
    ]);
    const id = await startConversationId(h, { suggested_task: task });
    const conv = await h.store.get(ConversationKind, NS, id);
    expect(conv!.spec.initialMessage!.content[0]!.text).toMatch(/failing checks of pull request acme\/api#42 \("Bump deps"\)/);
    expect(conv!.spec).toMatchObject({ selectedRepository: 'acme/api', gitProvider: 'github' });
    expect(await record(id)).toMatchObject({ trigger: 'suggested_task', selected_repository: 'acme/api' });
  });

  it('PATCH public sets and clears it, as OpenHands clients send it', async () => {
    const id = await startConversationId(h, { initial_message: hello });
    let r = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { public: true } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ public: true, unapplied_fields: { public: expect.stringMatching(/no public sharing/) } });
    r = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { public: null, title: 'T' } });
    expect(r.body).toMatchObject({ public: null, title: 'T', unapplied_fields: {} });
    expect((await h.store.get(ConversationKind, NS, id))!.spec.clientFields).toBeUndefined();
  });

  it('still refuses unknown fields and bad values with field paths', async () => {
    const r = await start({ agent_type: 'planner', trigger: 'carrier-pigeon', pr_number: ['x'], no_such_field: 1 });
    expect(r.status).toBe(422);
    const locs = r.body.detail.map((i: { loc: unknown[] }) => i.loc.join('.'));
    for (const l of ['body.agent_type', 'body.trigger', 'body.pr_number.0']) expect(locs).toContain(l);
    expect(JSON.stringify(r.body)).toContain('no_such_field');
  });
});
