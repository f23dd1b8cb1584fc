// The flows of the side-by-side suite, over /api/v1 only. Each drives one application server (an
// AppSide) and returns what a client saw, reduced to what must agree: status codes, field names,
// the JSON types of the fields both fill, enum values, event kinds in order, start-task steps, 422
// locations. Values that differ by nature (ids, timestamps, texts) are left out on purpose. The flows
// run in order and share one conversation per side (`Ctx`): a start costs OpenHands a new agent
// server process, 10-30 s.
import { randomUUID } from 'node:crypto';
import { MODEL, type AppSide, type Reply } from './servers.ts';
import {
  V1,
  UNKNOWN,
  STEPS,
  message,
  START_REQUESTS,
  finish,
  until,
  typeOf,
  fields,
  types,
  locs,
  records,
  events,
  isUpdate,
  kinds,
  updateKeys,
  beforeFirstMessage,
  finished,
  liveSocket,
  pollTask,
  inOrder,
  type Ctx,
  type Flow,
} from './client.ts';

export type { Ctx, View } from './client.ts';
export { message, START_REQUESTS } from './client.ts';

export const FLOWS: [string, Flow][] = [
  /** Credentials as each server's clients send them, none, and the key sent in the other server's header. */
  [
    'auth',
    async (s) => ({
      none: (await s.api('GET', `${V1}/app-conversations/search`, undefined, { auth: false })).status,
      with_key: (await s.api('GET', `${V1}/app-conversations/search`)).status,
      bearer: (await fetch(`${s.url}${V1}/app-conversations/search`, { headers: { authorization: `Bearer ${s.key}` } })).status,
      session_header: (await fetch(`${s.url}${V1}/app-conversations/search`, { headers: { 'x-session-api-key': s.key } })).status,
      alive: (await s.api('GET', '/alive', undefined, { auth: false })).status,
      health: (await s.api('GET', '/health', undefined, { auth: false })).status,
    }),
  ],

  /** Start with an initial message, poll the task to READY, wait for the agent's answer. */
  [
    'start',
    async (s, ctx) => {
      s.script(finish('Hello back.'));
      const r = await s.api('POST', `${V1}/app-conversations`, START_REQUESTS.withMessage('Say hello.'));
      const { task, seen } = await pollTask(s, r.body.id);
      Object.assign(ctx, { task: task.id, conversation: task.app_conversation_id, sandbox: task.sandbox_id });
      const evs = await finished(s, task.app_conversation_id);
      const [rec] = await records(s, [task.app_conversation_id]);
      return {
        status: r.status,
        task_fields: fields(r.body),
        task_types: types(r.body),
        first_status: r.body.status,
        final_status: task.status,
        ready_task_types: types(task),
        polled_in_order: inOrder(seen),
        polled_sees_a_middle_step: seen.some((st) => st !== 'WORKING' && st !== 'READY'),
        record_fields: fields(rec),
        record_types: types(rec),
        sandbox_status: rec.sandbox_status,
        events: kinds(evs),
        before_first_message: beforeFirstMessage(evs),
        update_keys: updateKeys(evs),
        event_fields: fields(evs.find((e) => e.kind === 'MessageEvent')),
        agent_calls: s.llm.requests.length - s.titleCalls(),
        title_calls: s.titleCalls(),
      };
    },
  ],

  /** Reads by id, search and count, for conversations and start tasks, with malformed and unknown ids. */
  [
    'read',
    async (s, ctx) => {
      const id = ctx.conversation!;
      const search = await s.api('GET', `${V1}/app-conversations/search`);
      const count = await s.api('GET', `${V1}/app-conversations/count`);
      const malformed = await s.api('GET', `${V1}/app-conversations?ids=not-a-uuid`);
      const unknown = await s.api('GET', `${V1}/app-conversations?ids=${UNKNOWN}`);
      const dashed = await s.api('GET', `${V1}/app-conversations?ids=${id.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5')}`);
      const tasks = await s.api('GET', `${V1}/app-conversations/start-tasks/search`);
      const taskCount = await s.api('GET', `${V1}/app-conversations/start-tasks/count`);
      const taskMalformed = await s.api('GET', `${V1}/app-conversations/start-tasks?ids=not-a-uuid`);
      const taskUnknown = await s.api('GET', `${V1}/app-conversations/start-tasks?ids=${UNKNOWN}`);
      return {
        search: search.status,
        search_fields: fields(search.body),
        search_items: search.body.items?.length,
        search_item_fields: fields(search.body.items?.[0]),
        count: [count.status, count.body],
        malformed: malformed.status,
        malformed_locs: locs(malformed),
        unknown: [unknown.status, unknown.body],
        dashed_found: dashed.body?.[0]?.id === id,
        tasks: tasks.status,
        tasks_fields: fields(tasks.body),
        task_item_fields: fields(tasks.body.items?.[0]),
        task_count: [taskCount.status, taskCount.body],
        task_malformed: taskMalformed.status,
        task_malformed_locs: locs(taskMalformed),
        task_unknown: [taskUnknown.status, taskUnknown.body],
      };
    },
  ],

  /** The events of the conversation: search filters and order, count, get by ids (malformed too). */
  [
    'events',
    async (s, ctx) => {
      const id = ctx.conversation!;
      const all = await events(s, id);
      const count = await s.api('GET', `${V1}/conversation/${id}/events/count`);
      const messages = await s.api('GET', `${V1}/conversation/${id}/events/search?kind__eq=MessageEvent`);
      const desc = await s.api('GET', `${V1}/conversation/${id}/events/search?sort_order=TIMESTAMP_DESC&limit=100`);
      const page = await s.api('GET', `${V1}/conversation/${id}/events/search?limit=1`);
      const byId = await s.api('GET', `${V1}/conversation/${id}/events?id=${all[0].id}&id=${UNKNOWN}`);
      const malformed = await s.api('GET', `${V1}/conversation/${id}/events?id=not-a-uuid`);
      const badLimit = await s.api('GET', `${V1}/conversation/${id}/events/search?limit=0`);
      return {
        count: [count.status, typeOf(count.body), count.body === all.length],
        messages: [messages.status, messages.body.items?.map((e: any) => `${e.kind}:${e.source}`)],
        desc_reversed: JSON.stringify(desc.body.items.map((e: any) => e.id)) === JSON.stringify(all.map((e) => e.id).reverse()),
        page: [page.status, page.body.items?.length, typeOf(page.body.next_page_id)],
        by_id: [byId.status, byId.body.map((e: any) => (e ? e.id === all[0].id : null))],
        malformed: malformed.status,
        malformed_locs: locs(malformed),
        bad_limit: badLimit.status,
        bad_limit_locs: locs(badLimit),
      };
    },
  ],

  /** A second message through the app: its answer, and the events it adds. */
  [
    'send_message',
    async (s, ctx) => {
      const id = ctx.conversation!;
      const before = new Set((await events(s, id)).map((e) => e.id));
      // Watched live as well: what the socket shows while the agent answers (its deltas included).
      const live = await liveSocket(s, id);
      await live.until('the full_state snapshot', (f) => f.some((e) => isUpdate(e) && e.key === 'full_state'));
      const replayed = live.frames.length;
      s.script(finish('Second answer.'));
      const r = await s.api('POST', `${V1}/app-conversations/${id}/send-message`, message('Once more.'));
      const evs = await finished(s, id, 2);
      await live.until('the finish observation', (f) => f.slice(replayed).some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish'));
      live.close();
      const empty = await s.api('POST', `${V1}/app-conversations/${id}/send-message`, { role: 'user', content: [] });
      const unknown = await s.api('POST', `${V1}/app-conversations/${UNKNOWN}/send-message`, message('Anyone?'));
      return {
        status: r.status,
        fields: fields(r.body),
        types: types(r.body),
        added: kinds(evs.filter((e) => !before.has(e.id))),
        live_first: live.frames[0] && (isUpdate(live.frames[0]) ? `update:${live.frames[0].key}` : live.frames[0].kind),
        live: kinds(live.frames.slice(replayed)),
        live_delta_fields: fields(live.frames.find((e) => e.kind === 'StreamingDeltaEvent')),
        empty: empty.status,
        empty_locs: locs(empty),
        unknown: unknown.status,
      };
    },
  ],

  /**
   * LLM profiles: saved with a key (never shown back), listed, read, refused with a bad name or an
   * unknown LLM field, renamed, activated; the running conversation switched to one, and answering
   * after the switch; deleted (idempotently).
   */
  [
    'profiles',
    async (s, ctx) => {
      const id = ctx.conversation!;
      const P = `${V1}/settings/profiles`;
      const KEY = 'sk-app-parity-profile-key';
      const seen: Reply[] = [];
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await s.api(method, path, body);
        seen.push(r);
        return r;
      };
      const empty = await call('GET', P);
      const save = await call('POST', `${P}/scripted`, { llm: { model: MODEL, base_url: s.llm.url, api_key: KEY } });
      const list = await call('GET', P);
      const detail = await call('GET', `${P}/scripted`);
      const unknown = await call('GET', `${P}/nope`);
      const badName = await call('POST', `${P}/bad%20name`, {});
      const extra = await call('POST', `${P}/other`, { llm: { model: MODEL, bogus: 1 } });
      const rename = await call('POST', `${P}/scripted/rename`, { new_name: 'main' });
      const activate = await call('POST', `${P}/main/activate`);
      const active = await call('GET', P);
      const activateUnknown = await call('POST', `${P}/nope/activate`);
      s.script(finish('After the switch.'));
      const sw = await call('POST', `${V1}/app-conversations/${id}/switch_profile`, { profile_name: 'main' });
      const swUnknown = await call('POST', `${V1}/app-conversations/${id}/switch_profile`, { profile_name: 'nope' });
      await call('POST', `${V1}/app-conversations/${id}/send-message`, message('Switched?'));
      await finished(s, id, 3);
      const [rec] = await records(s, [id]);
      const del = await call('DELETE', `${P}/main`);
      const delAgain = await call('DELETE', `${P}/main`);
      const after = await call('GET', P);
      return {
        empty: [empty.status, empty.body],
        save: [save.status, fields(save.body)],
        list: [list.status, fields(list.body), list.body?.profiles?.map((p: any) => [p.name, p.model, p.api_key_set])],
        detail: [detail.status, (fields(detail.body) as string[]).filter((f) => f !== 'unapplied_fields'), detail.body?.config?.api_key, detail.body?.api_key_set, detail.body?.config?.model],
        unknown: unknown.status,
        bad_name: [badName.status, locs(badName)],
        extra: [extra.status, locs(extra)],
        rename: [rename.status, rename.body?.name],
        activate: [activate.status, fields(activate.body), activate.body?.model],
        active: active.body?.active_profile,
        activate_unknown: activateUnknown.status,
        switch: [sw.status, sw.body],
        switch_unknown: swUnknown.status,
        record_llm_model: rec.llm_model,
        delete: [del.status, delAgain.status, after.body?.profiles?.length],
        key_echoed: seen.some((r) => r.text.includes(KEY)),
      };
    },
  ],

  /** Pause the conversation's sandbox, read it paused, send while paused, resume. */
  [
    'pause_resume',
    async (s, ctx) => {
      const id = ctx.conversation!;
      const sandbox = ctx.sandbox!;
      const pause = await s.api('POST', `${V1}/sandboxes/${sandbox}/pause`);
      const paused = await until(`the sandbox ${sandbox} to read PAUSED (pause: ${pause.status} ${pause.text})`, async () => {
        const [sb] = (await s.api('GET', `${V1}/sandboxes?id=${sandbox}`)).body;
        return sb?.status === 'PAUSED' ? sb : undefined;
      });
      const [rec] = await records(s, [id]);
      // A message that does not run the agent, sent while paused: OpenHands refuses it (resume first).
      const sendPaused = await s.api('POST', `${V1}/app-conversations/${id}/send-message`, message('While paused.', false));
      const resume = await s.api('POST', `${V1}/sandboxes/${sandbox}/resume`);
      const running = await until('the sandbox to read RUNNING', async () => {
        const [sb] = (await s.api('GET', `${V1}/sandboxes?id=${sandbox}`)).body;
        return sb?.status === 'RUNNING' ? sb : undefined;
      });
      const missing = await s.api('POST', `${V1}/sandboxes/no-such-sandbox/pause`);
      return {
        pause: [pause.status, pause.body],
        paused_fields: fields(paused),
        paused_types: types(paused),
        record_sandbox_status: rec.sandbox_status,
        record_execution_status: rec.execution_status,
        send_paused: sendPaused.status,
        resume: [resume.status, resume.body],
        running_fields: fields(running),
        running_urls: running.exposed_urls?.map((u: any) => u.name),
        missing: missing.status,
      };
    },
  ],

  /**
   * A start streamed instead of polled, without an initial message, in the first conversation's
   * sandbox (`sandbox_id`: no second agent server to wait for); a message queued for its start task
   * after the first snapshot (before READY) is delivered once it is ready, and answered. (With an
   * initial message too, whether the agent answers the two in one run or two depends on timing.)
   */
  [
    'stream_start',
    async (s, ctx) => {
      s.script(finish('Pending seen.'));
      const res = await fetch(`${s.url}${V1}/app-conversations/stream-start`, {
        method: 'POST',
        headers: { ...s.authHeaders, 'content-type': 'application/json' },
        body: JSON.stringify(START_REQUESTS.inSandbox(ctx.sandbox!)),
      });
      const reader = res.body!.getReader();
      let text = '';
      // Until the first snapshot is whole: the array so far, closed, parses.
      const sofar = () => {
        try {
          const a = JSON.parse(`${text}]`) as any[];
          return a.length ? a : undefined;
        } catch {
          return undefined;
        }
      };
      while (!sofar()) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before its first snapshot: ${text}`);
        text += Buffer.from(value).toString('utf8');
      }
      const taskId = sofar()![0].id;
      const queued = await s.api('POST', `${V1}/conversations/task-${taskId}/pending-messages`, { role: 'user', content: [{ type: 'text', text: 'Queued.' }] });
      const bad = await s.api('POST', `${V1}/conversations/task-${taskId}/pending-messages`, { content: 'not a list' });
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('utf8');
      }
      const snapshots = JSON.parse(text) as any[];
      const id = snapshots.at(-1).app_conversation_id;
      const evs = await finished(s, id);
      const [rec] = await records(s, [id]);
      return {
        same_sandbox: rec.sandbox_id === ctx.sandbox,
        status: res.status,
        content_type: res.headers.get('content-type')?.split(';')[0],
        steps: snapshots.map((t) => t.status),
        snapshot_fields: fields(snapshots[0]),
        queued: queued.status,
        queued_fields: fields(queued.body),
        queued_types: types(queued.body),
        bad: bad.status,
        bad_locs: locs(bad),
        events: kinds(evs),
      };
    },
  ],

  /**
   * A start request with the fields an OpenHands client sets (caller-chosen id, parent, model,
   * plan agent, suffix, trigger, PR numbers, public), into the first conversation's sandbox: taken
   * unchanged, and the record shows them; the parent lists its sub-conversation.
   */
  [
    'start_fields',
    async (s, ctx) => {
      const chosen = randomUUID();
      const r = await s.api('POST', `${V1}/app-conversations`, START_REQUESTS.clientFields(ctx.sandbox!, chosen, ctx.conversation!));
      const { task } = r.status === 200 ? await pollTask(s, r.body.id) : { task: undefined };
      const id = task?.app_conversation_id;
      const [rec] = id ? await records(s, [id]) : [];
      const listsChild = (p: any) => p?.sub_conversation_ids?.map((x: string) => x.replaceAll('-', '')).includes(chosen.replaceAll('-', '')) === true;
      // OpenHands 1.11 lists the child on its parent a moment after the child's start task reads
      // READY (seen false once, under load): read the parent again for up to 10 s, as a client refreshing would.
      const parentListsIt = id ? await until('the parent to list the sub-conversation', async () => listsChild((await records(s, [ctx.conversation!]))[0]), 10_000).catch(() => false) : undefined;
      const again = await s.api('POST', `${V1}/app-conversations`, START_REQUESTS.clientFields(ctx.sandbox!, chosen, ctx.conversation!));
      const againTask = again.status === 200 ? (await pollTask(s, again.body.id)).task : undefined;
      return {
        status: r.status,
        final_status: task?.status,
        chosen_id: id?.replaceAll('-', '') === chosen.replaceAll('-', ''),
        record: rec && {
          parent: rec.parent_conversation_id?.replaceAll('-', '') === ctx.conversation!.replaceAll('-', ''),
          llm_model: rec.llm_model,
          trigger: rec.trigger,
          pr_number: rec.pr_number,
          public: rec.public,
          sandbox: rec.sandbox_id === ctx.sandbox,
        },
        parent_lists_it: parentListsIt,
        // The same id again: refused at once (409) or by its start task (ERROR).
        id_taken: again.status === 200 ? againTask?.status : again.status,
      };
    },
  ],

  /** Sandbox specs: the search page and a get by id. */
  [
    'sandbox_specs',
    async (s) => {
      const search = await s.api('GET', `${V1}/sandbox-specs/search`);
      const first = search.body.items?.[0];
      const byId = await s.api('GET', `${V1}/sandbox-specs?id=${encodeURIComponent(first?.id ?? 'x')}&id=no-such-spec`);
      return {
        search: search.status,
        search_fields: fields(search.body),
        item_fields: fields(first),
        item_types: types(first),
        by_id: [byId.status, byId.body?.map?.((x: any) => (x ? x.id === first.id : null))],
      };
    },
  ],

  /**
   * Settings and their forms, conversation settings saved and read back, skills search, and the
   * model and provider listings. The forms list what each server lets a user set, so their field
   * keys are not compared (OpenHands' agent form has its tools, condenser, critic and ACP sections);
   * their shape is, and the conversation form's keys.
   */
  [
    'settings_config',
    async (s) => {
      const settings = await s.api('GET', `${V1}/settings`);
      const form = async (path: string) => {
        const r = await s.api('GET', `${V1}/settings/${path}`);
        const section = r.body?.sections?.[0];
        return { status: r.status, body: r.body, section, field: section?.fields?.[0] };
      };
      const conv = await form('conversation-schema');
      const agent = await form('agent-schema');
      const convKeys = (conv.body?.sections ?? []).flatMap((x: any) => x.fields.map((f: any) => f.key));
      const save = await s.api('POST', `${V1}/settings`, { conversation_settings_diff: { max_iterations: 40 } });
      const saved = await s.api('GET', `${V1}/settings`);
      await s.api('POST', `${V1}/settings`, { conversation_settings_diff: { max_iterations: 500 } });
      const skills = await s.api('GET', `${V1}/skills/search`);
      const skillsBad = await s.api('GET', `${V1}/skills/search?limit=0`);
      const models = await s.api('GET', `${V1}/config/models/search`);
      const providers = await s.api('GET', `${V1}/config/providers/search`);
      return {
        settings: settings.status,
        settings_conversation_fields: fields(settings.body?.conversation_settings),
        // After the profiles flow activated its profile: its model, and no key shown.
        settings_agent_llm: [settings.body?.agent_settings?.llm?.model, settings.body?.agent_settings?.llm?.api_key],
        conversation_schema: conv.status,
        conversation_schema_fields: fields(conv.body),
        conversation_schema_section_fields: fields(conv.section),
        conversation_schema_field_fields: fields(conv.field),
        conversation_schema_field_types: types(conv.field),
        conversation_schema_keys: convKeys,
        agent_schema: agent.status,
        agent_schema_fields: fields(agent.body),
        agent_schema_section_fields: fields(agent.section),
        agent_schema_field_fields: fields(agent.field),
        agent_schema_field_types: types(agent.field),
        agent_schema_has_model: (agent.body?.sections ?? []).some((x: any) => x.fields.some((f: any) => f.key === 'llm.model')),
        conversation_settings_saved: [save.status, saved.body?.conversation_settings?.max_iterations],
        skills: [skills.status, fields(skills.body), skills.body?.items?.length],
        skills_bad: [skillsBad.status, locs(skillsBad)],
        models: models.status,
        models_fields: fields(models.body),
        model_item: typeOf(models.body?.items?.[0]),
        providers: providers.status,
        providers_fields: fields(providers.body),
        provider_item: typeOf(providers.body?.items?.[0]),
      };
    },
  ],

  /**
   * The git searches against one real Gitea, given to both servers as their forgejo host with the
   * same token (POST /secrets/git-providers, as OpenHands' web app saves it): what a client sees to
   * pick a repository and a branch, page by page, and the errors. Items are compared whole; each
   * server reads the same host, so repositories and branches must agree to the commit.
   */
  [
    'git_search',
    async (s, ctx) => {
      const g = ctx.gitea;
      if (!g) return { skipped: 'no Gitea (hack/gitea.sh)' };
      const get = (q: string) => s.api('GET', `${V1}/git/${q}`);
      const page = (r: Reply) => [r.status, r.body?.items?.map?.((x: any) => x.full_name ?? x.name), r.body?.next_page_id ?? null];
      const next = async (path: string, first: Reply) => (first.body?.next_page_id ? page(await get(`${path}&page_id=${first.body.next_page_id}`)) : null);
      const noToken = await get('repositories/search?provider=forgejo');
      const badToken = await s.api('POST', `${V1}/secrets/git-providers`, { provider_tokens: { forgejo: { token: '0'.repeat(40), host: g.url } } });
      const store = await s.api('POST', `${V1}/secrets/git-providers`, { provider_tokens: { forgejo: { token: g.token, host: g.url } } });
      const settings = await s.api('GET', `${V1}/settings`);
      const installations = await get('installations/search?provider=forgejo');
      const repos = await get('repositories/search?provider=forgejo');
      const repos2 = await get('repositories/search?provider=forgejo&limit=2');
      const query = await get('repositories/search?provider=forgejo&query=widg');
      const queried1 = await get('repositories/search?provider=forgejo&query=a&limit=1');
      const branches = await get('branches/search?provider=forgejo&repository=acme/widgets&query=');
      const branches2 = await get('branches/search?provider=forgejo&repository=acme/widgets&query=&limit=2');
      const featured = await get('branches/search?provider=forgejo&repository=acme/widgets&query=feature');
      const featured2 = await get('branches/search?provider=forgejo&repository=acme/widgets&query=feature&limit=2');
      const missing = await get('branches/search?provider=forgejo&repository=acme/nothing-here&query=');
      const suggested = await get('suggested-tasks/search');
      const sortListing = await get('repositories/search?provider=forgejo&sort_order=stars-desc');
      const badLimit = await get('repositories/search?provider=forgejo&limit=0');
      const badProvider = await get('repositories/search?provider=sourcehut');
      const noRepository = await get('branches/search?provider=forgejo&query=');
      const github = await get('repositories/search?provider=github');
      return {
        no_token: [noToken.status, noToken.body?.detail],
        bad_token: badToken.status,
        store: [store.status, store.body],
        provider_tokens_set: Object.keys(settings.body?.provider_tokens_set ?? {}),
        installations: installations.status,
        repos: [repos.status, repos.body],
        repos_page1: page(repos2),
        repos_page2: await next('repositories/search?provider=forgejo&limit=2', repos2),
        query: [query.status, query.body],
        query_page1: page(queried1),
        query_page2: await next('repositories/search?provider=forgejo&query=a&limit=1', queried1),
        branches: [branches.status, branches.body],
        branches_page1: page(branches2),
        branches_page2: await next('branches/search?provider=forgejo&repository=acme/widgets&query=&limit=2', branches2),
        branch_query: [featured.status, featured.body],
        branch_query_page1: page(featured2),
        branch_query_page2: await next('branches/search?provider=forgejo&repository=acme/widgets&query=feature&limit=2', featured2),
        branches_missing: [missing.status, missing.body],
        suggested: [suggested.status, suggested.body],
        sort_listing: [sortListing.status, sortListing.body?.detail],
        bad_limit: [badLimit.status, locs(badLimit)],
        bad_provider: [badProvider.status, locs(badProvider)],
        no_repository: [noRepository.status, locs(noRepository)],
        github: github.status,
      };
    },
  ],

  /**
   * The git searches for gitlab against one stand-in GitLab (src/testing/gitlab), given to both
   * servers as their gitlab host with the same token: the token check, projects (nested groups),
   * searches, branches page by page, suggested tasks, and the errors. Both read the same host.
   */
  [
    'gitlab_search',
    async (s, ctx) => {
      const g = ctx.gitlab!;
      const get = (q: string) => s.api('GET', `${V1}/git/${q}`);
      const page = (r: Reply) => [r.status, r.body?.items?.map?.((x: any) => x.full_name ?? x.name), r.body?.next_page_id ?? null];
      const next = async (path: string, first: Reply) => (first.body?.next_page_id ? page(await get(`${path}&page_id=${first.body.next_page_id}`)) : null);
      // From no provider token at all (an earlier flow's are dropped: OpenHands replaces the whole set on a save, agentyard
      // keeps the others), and back to none at the end, so the next flow's suggested tasks hold no GitLab ones.
      await s.api('DELETE', `${V1}/secrets/git-providers`);
      const noToken = await get('repositories/search?provider=gitlab');
      const badToken = await s.api('POST', `${V1}/secrets/git-providers`, { provider_tokens: { gitlab: { token: 'glpat-wrong', host: g.url } } });
      const store = await s.api('POST', `${V1}/secrets/git-providers`, { provider_tokens: { gitlab: { token: g.token, host: g.url } } });
      const settings = await s.api('GET', `${V1}/settings`);
      const installations = await get('installations/search?provider=gitlab');
      const repos = await get('repositories/search?provider=gitlab');
      const repos2 = await get('repositories/search?provider=gitlab&limit=2');
      const query = await get('repositories/search?provider=gitlab&query=widg');
      const queried1 = await get('repositories/search?provider=gitlab&query=a&limit=1&sort_order=updated-desc');
      const nested = encodeURIComponent('acme/platform/api');
      const branches = await get(`branches/search?provider=gitlab&repository=${nested}&query=`);
      const branches2 = await get(`branches/search?provider=gitlab&repository=${nested}&query=&limit=2`);
      const featured = await get('branches/search?provider=gitlab&repository=acme/widgets&query=feature');
      const featured1 = await get('branches/search?provider=gitlab&repository=acme/widgets&query=feature&limit=1');
      const missing = await get('branches/search?provider=gitlab&repository=acme/nothing-here&query=');
      const suggested = await get('suggested-tasks/search');
      const sortListing = await get('repositories/search?provider=gitlab&sort_order=stars-desc');
      const reposPage2 = await next('repositories/search?provider=gitlab&limit=2', repos2);
      const queryPage2 = await next('repositories/search?provider=gitlab&query=a&limit=1&sort_order=updated-desc', queried1);
      const branchesPage2 = await next(`branches/search?provider=gitlab&repository=${nested}&query=&limit=2`, branches2);
      const branchQueryPage2 = await next('branches/search?provider=gitlab&repository=acme/widgets&query=feature&limit=1', featured1);
      const unset = await s.api('DELETE', `${V1}/secrets/git-providers`);
      return {
        no_token: [noToken.status, noToken.body?.detail],
        bad_token: badToken.status,
        store: [store.status, store.body],
        provider_tokens_set: Object.keys(settings.body?.provider_tokens_set ?? {}),
        installations: [installations.status, installations.body?.detail],
        repos: [repos.status, repos.body],
        repos_page1: page(repos2),
        repos_page2: reposPage2,
        query: [query.status, query.body],
        query_page1: page(queried1),
        query_page2: queryPage2,
        branches: [branches.status, branches.body],
        branches_page1: page(branches2),
        branches_page2: branchesPage2,
        branch_query: [featured.status, featured.body],
        branch_query_page1: page(featured1),
        branch_query_page2: branchQueryPage2,
        branches_missing: [missing.status, missing.body],
        suggested: [suggested.status, suggested.body],
        sort_listing: [sortListing.status, sortListing.body?.detail],
        unset: [unset.status, unset.body],
      };
    },
  ],

  /** Delete the conversation, then read it, delete it again, and read its events. */
  [
    'delete',
    async (s, ctx) => {
      const id = ctx.conversation!;
      const del = await s.api('DELETE', `${V1}/app-conversations/${id}`);
      const [rec] = await until('the record to go', async () => {
        const r = await records(s, [id]);
        return r[0] === null ? r : undefined;
      });
      const again = await s.api('DELETE', `${V1}/app-conversations/${id}`);
      const malformed = await s.api('DELETE', `${V1}/app-conversations/not-a-uuid`);
      const evs = await s.api('GET', `${V1}/conversation/${id}/events/search`);
      const send = await s.api('POST', `${V1}/app-conversations/${id}/send-message`, message('Still there?'));
      return {
        delete: [del.status, del.body],
        record: rec,
        again: again.status,
        malformed: malformed.status,
        events_after: evs.status,
        send_after: send.status,
      };
    },
  ],
  /**
   * The git searches for github, against the GitHub stand-in (src/testing/github: GitHub's REST and
   * GraphQL answers over HTTPS, servers.ts) given to both servers as their github host, the token
   * saved as OpenHands' web app saves it (host without a scheme: OpenHands makes it
   * https://<host>/api/v3). Page 1 of each search is compared whole (pushed_at on its own key).
   */
  [
    'github_search',
    async (s, ctx) => {
      const g = ctx.github;
      if (!g) return { skipped: 'no GitHub stand-in (openssl)' };
      const get = (q: string) => s.api('GET', `${V1}/git/${q}`);
      const items = (r: Reply) => [r.status, Array.isArray(r.body?.items) ? r.body.items.map(({ pushed_at: _, ...rest }: any) => rest) : r.body, r.body?.next_page_id ?? null];
      const badToken = await s.api('POST', `${V1}/secrets/git-providers`, { provider_tokens: { github: { token: 'ghp_unknown_to_github', host: g.host } } });
      const store = await s.api('POST', `${V1}/secrets/git-providers`, { provider_tokens: { github: { token: g.token, host: g.host } } });
      const installations = await get('installations/search?provider=github');
      const repos = await get('repositories/search?provider=github&limit=2');
      const installationRepos = await get('repositories/search?provider=github&installation_id=12');
      const query = await get('repositories/search?provider=github&query=widget');
      const inOrg = await get(`repositories/search?provider=github&query=${encodeURIComponent('acme/gad')}`);
      const branches = await get('branches/search?provider=github&repository=acme/widgets&query=');
      const branchQuery = await get('branches/search?provider=github&repository=acme/widgets&query=feature');
      const missing = await get('branches/search?provider=github&repository=acme/nothing-here&query=');
      const suggested = await get('suggested-tasks/search');
      return {
        bad_token: badToken.status,
        store: [store.status, store.body],
        installations: [installations.status, installations.body],
        repos: items(repos),
        pushed_at: repos.body?.items?.map?.((r: any) => r.pushed_at),
        installation_repos: items(installationRepos),
        query: items(query),
        in_org: items(inOrg),
        branches: [branches.status, branches.body],
        branch_query: [branchQuery.status, branchQuery.body],
        branches_missing: [missing.status, missing.body],
        suggested: [suggested.status, suggested.body],
      };
    },
  ],
];
