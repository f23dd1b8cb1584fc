// One conversation: its status, the live transcript (messages, tool calls with their
// observations, errors, state changes), a follow-up box, and pause / resume / delete.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type AgentEvent, type Conversation } from './api.ts';
import { EventFeed, type FeedState } from './feed.ts';

interface Text {
  type: string;
  text?: string;
}

const texts = (content: unknown): string =>
  Array.isArray(content) ? (content as Text[]).filter((c) => c.type === 'text' && c.text).map((c) => c.text).join('\n') : '';

const clip = (s: string, n = 4000): string => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s);

function EventItem({ e }: { e: AgentEvent }) {
  switch (e.kind) {
    case 'MessageEvent': {
      const msg = e['llm_message'] as { role: string; content: unknown };
      return (
        <li class={`ev message role-${msg.role}`} data-kind={e.kind} data-id={e.id}>
          <span class="who">{msg.role === 'user' ? 'You' : 'Agent'}</span>
          <div class="text">{texts(msg.content)}</div>
        </li>
      );
    }
    case 'ActionEvent': {
      const thought = texts(e['thought']);
      return (
        <li class="ev action" data-kind={e.kind} data-id={e.id}>
          <span class="who">Tool call · <code class="tool">{String(e['tool_name'])}</code></span>
          {thought && <div class="text muted">{thought}</div>}
          {typeof e['summary'] === 'string' && <div class="text">{e['summary']}</div>}
          <details>
            <summary>Arguments</summary>
            <pre>{clip(JSON.stringify(e['action'] ?? (e['tool_call'] as { arguments?: unknown } | undefined)?.arguments, null, 2) ?? '')}</pre>
          </details>
        </li>
      );
    }
    case 'ObservationEvent': {
      const obs = e['observation'] as { content?: unknown } | undefined;
      return (
        <li class="ev observation" data-kind={e.kind} data-id={e.id}>
          <span class="who">Observation · <code>{String(e['tool_name'])}</code></span>
          <pre>{clip(texts(obs?.content) || JSON.stringify(obs, null, 2))}</pre>
        </li>
      );
    }
    case 'AgentErrorEvent':
    case 'ConversationErrorEvent':
      return (
        <li class="ev error" data-kind={e.kind} data-id={e.id}>
          <span class="who">Error</span>
          <div class="text">{String(e['error'] ?? e['detail'] ?? '')}</div>
        </li>
      );
    case 'ConversationStateUpdateEvent':
      if (e['key'] === 'execution_status') return <li class="ev state muted" data-kind={e.kind} data-id={e.id}>Agent is {String(e['value'])}</li>;
      return null;
    case 'SystemPromptEvent':
    case 'TokenEvent':
    case 'LLMCompletionLogEvent':
      return null;
    default:
      return <li class="ev other muted" data-kind={e.kind} data-id={e.id}>{e.kind}</li>;
  }
}

export function Transcript({ apiKey, id }: { apiKey: string; id: string }) {
  const [conv, setConv] = useState<Conversation | null>();
  const [events, setEvents] = useState<AgentEvent[]>([]);
  const [feed, setFeed] = useState<FeedState>('loading');
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const load = async () => {
      try {
        const [c] = await api<Conversation[]>(apiKey, 'GET', `/app-conversations?ids=${id}`);
        if (live) setConv(c ?? null);
      } catch (err) {
        if (live) setError((err as Error).message);
      }
      if (live) timer = setTimeout(load, 2000);
    };
    void load();
    const f = new EventFeed(apiKey, id, (evs, state) => {
      setEvents(evs);
      setFeed(state);
    });
    f.start().catch((err: Error) => setError(err.message));
    return () => {
      live = false;
      clearTimeout(timer);
      f.close();
    };
  }, [apiKey, id]);

  const act = async (what: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await what();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  const send = (e: Event) => {
    e.preventDefault();
    const t = text.trim();
    if (!t) return;
    void act(async () => {
      await api(apiKey, 'POST', `/app-conversations/${id}/send-message`, { role: 'user', content: [{ type: 'text', text: t }], run: true });
      setText('');
    });
  };

  if (conv === null) return <p class="card">This conversation does not exist. <a href="#/">Back to the list</a></p>;
  const sandbox = conv?.sandbox_id;
  return (
    <section class="card conversation">
      <p><a href="#/">← Conversations</a></p>
      <h2 id="conversation-title">{conv?.title ?? id}</h2>
      <p class="status">
        Sandbox <span class="badge" id="sandbox-status">{conv?.sandbox_status ?? '…'}</span> · Agent <span id="execution-status">{conv?.execution_status ?? '—'}</span> · Transcript{' '}
        <span id="feed-state">{feed}</span>
      </p>
      <div class="actions">
        <button type="button" disabled={!sandbox || conv?.sandbox_status !== 'RUNNING'} onClick={() => act(() => api(apiKey, 'POST', `/sandboxes/${sandbox}/pause`))}>Pause</button>
        <button type="button" disabled={!sandbox || conv?.sandbox_status !== 'PAUSED'} onClick={() => act(() => api(apiKey, 'POST', `/sandboxes/${sandbox}/resume`))}>Resume</button>
        <button
          type="button"
          class="danger"
          onClick={() => {
            if (confirm('Delete this conversation and its sandbox?')) void act(async () => {
              await api(apiKey, 'DELETE', `/app-conversations/${id}`);
              location.hash = '#/';
            });
          }}
        >
          Delete
        </button>
      </div>
      {error && <p class="field-error" role="alert">{error}</p>}
      <ol id="transcript">
        {events.map((e) => (
          <EventItem key={e.id} e={e} />
        ))}
      </ol>
      <form onSubmit={send} class="followup">
        <label for="followup">Message the agent</label>
        <textarea id="followup" rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit">Send</button>
      </form>
    </section>
  );
}
