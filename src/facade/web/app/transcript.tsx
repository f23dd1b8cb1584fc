// One conversation: its status, the live transcript (messages, each tool call with its
// observation, thinking, security analyses, state changes, errors), confirmation mode (approve / reject), a
// follow-up box, pause / resume, rename, fork, download and delete, and the workspace: files and
// Git changes with their diff.
//
// 10,000 events: the rows live in fixed-size blocks (transcript-model.ts); a block is a memoized
// component, so an append re-renders one block; only the last few blocks are mounted at first and
// earlier ones are mounted as the reader scrolls up (an IntersectionObserver on a sentinel), and
// mounted blocks off screen skip layout and paint (CSS content-visibility).
import { memo } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, awaitConversation, COOKIE_SESSION, type AgentEvent, type Conversation } from './api.ts';
import { ConversationChanges } from './changes.ts';
import { EventFeed, type FeedState } from './feed.ts';
import { BLOCK_ROWS, TranscriptModel, type Row } from './transcript-model.ts';
import { Workspace } from './workspace.tsx';

interface Text {
  type: string;
  text?: string;
}

const texts = (content: unknown): string =>
  Array.isArray(content) ? (content as Text[]).filter((c) => c.type === 'text' && c.text).map((c) => c.text).join('\n') : typeof content === 'string' ? content : '';

const clip = (s: string, n = 4000): string => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s);

/** Reasoning a model showed: reasoning_content, or its thinking blocks. */
function thinkingOf(e: AgentEvent): string {
  const blocks = Array.isArray(e['thinking_blocks']) ? (e['thinking_blocks'] as { thinking?: string }[]).map((b) => b.thinking ?? '').filter(Boolean) : [];
  const reasoning = typeof e['reasoning_content'] === 'string' ? e['reasoning_content'] : '';
  return [reasoning, ...blocks].filter(Boolean).join('\n\n');
}

function Thinking({ e }: { e: AgentEvent }) {
  const t = thinkingOf(e);
  return t ? (
    <details class="thinking">
      <summary>Thinking</summary>
      <pre>{clip(t)}</pre>
    </details>
  ) : null;
}

function Result({ e }: { e: AgentEvent }) {
  if (e.kind === 'UserRejectObservation') {
    return (
      <div class="result rejected" data-id={e.id} data-kind={e.kind}>
        <span class="who">Rejected{e['rejection_source'] === 'hook' ? ' by a hook' : ''}</span> {String(e['rejection_reason'] ?? '')}
      </div>
    );
  }
  if (e.kind === 'AgentErrorEvent') {
    return (
      <div class="result error" data-id={e.id} data-kind={e.kind}>
        <span class="who">Error</span> <pre>{clip(String(e['error'] ?? ''))}</pre>
      </div>
    );
  }
  const obs = e['observation'] as { content?: unknown; is_error?: boolean } | undefined;
  return (
    <div class={`result observation${obs?.is_error ? ' error' : ''}`} data-id={e.id} data-kind={e.kind}>
      <span class="who">Observation</span>
      <pre>{clip(texts(obs?.content) || JSON.stringify(obs, null, 2) || '')}</pre>
    </div>
  );
}

function RowView({ row }: { row: Row }) {
  const e = row.e;
  switch (row.type) {
    case 'message': {
      const msg = e['llm_message'] as { role: string; content: unknown };
      return (
        <li class={`ev message role-${msg.role}`} data-kind={e.kind} data-id={e.id}>
          <span class="who">{msg.role === 'user' ? 'You' : 'Agent'}</span>
          <Thinking e={e} />
          <div class="text">{texts(msg.content)}</div>
        </li>
      );
    }
    case 'tool': {
      const thought = texts(e['thought']);
      const risk = e['security_risk'];
      return (
        <li class={`ev action${row.result ? '' : ' pending'}`} data-kind={e.kind} data-id={e.id}>
          <span class="who">
            Tool call · <code class="tool">{String(e['tool_name'])}</code>
            {typeof risk === 'string' && risk !== 'UNKNOWN' && <span class={`badge risk-${risk.toLowerCase()}`}>{risk} risk</span>}
          </span>
          <Thinking e={e} />
          {thought && <div class="text muted">{thought}</div>}
          {typeof e['summary'] === 'string' && <div class="text">{e['summary']}</div>}
          <details>
            <summary>Arguments</summary>
            <pre>{clip(JSON.stringify(e['action'] ?? (e['tool_call'] as { arguments?: unknown } | undefined)?.arguments, null, 2) ?? '')}</pre>
          </details>
          {row.result ? <Result e={row.result} /> : <div class="result muted">Waiting for the result…</div>}
        </li>
      );
    }
    case 'error':
      return (
        <li class="ev error" data-kind={e.kind} data-id={e.id}>
          <span class="who">Error</span>
          <div class="text">{String(e['error'] ?? e['detail'] ?? '')}</div>
        </li>
      );
    case 'analysis':
      return (
        <li class="ev analysis" data-kind={e.kind} data-id={e.id}>
          <span class="who">
            Security analysis · <code class="analyzer">{String(e['analyzer'] ?? '')}</code>
            {typeof e['policy'] === 'string' && <span class="muted"> · {e['policy']}</span>}
          </span>
          <ul class="verdicts">
            {row.verdicts.map((v) => (
              <li key={v.actionId} data-action-id={v.actionId}>
                <span class={`badge risk-${v.risk.toLowerCase()}`}>{v.risk} risk</span> {v.tool ? <code class="tool">{v.tool}</code> : <span class="muted">an earlier action</span>}
                {v.summary && <span> {v.summary}</span>}
                {v.details && <div class="text muted">{v.details}</div>}
              </li>
            ))}
          </ul>
        </li>
      );
    case 'state':
      return (
        <li class="ev state muted" data-kind={e.kind} data-id={e.id}>
          {e.kind === 'PauseEvent' ? 'Paused by the user' : e.kind === 'InterruptEvent' ? 'Interrupted by the user' : `Agent is ${String(e['value']).replaceAll('_', ' ')}`}
        </li>
      );
    default:
      return (
        <li class="ev other muted" data-kind={e.kind} data-id={e.id}>
          {e.kind}
        </li>
      );
  }
}

/** A block of rows; re-rendered only when the model replaced it (identity). */
const Block = memo(function Block({ rows }: { rows: Row[] }) {
  return (
    <ol class="block">
      {rows.map((r) => (
        <RowView key={r.e.id} row={r} />
      ))}
    </ol>
  );
});

/** Blocks mounted at first, and added each time the reader reaches the top. */
const WINDOW_BLOCKS = 4;

function Rows({ model, version }: { model: TranscriptModel; version: number }) {
  const [extra, setExtra] = useState(0);
  const sentinel = useRef<HTMLDivElement>(null);
  // Following the end (as a chat does) while the reader is at the bottom; earlier blocks are
  // mounted only once the reader has scrolled up to the top, never while following.
  const following = useRef(true);
  const total = model.blocks.length;
  const first = Math.max(0, total - WINDOW_BLOCKS - extra);
  useEffect(() => {
    const onScroll = () => {
      following.current = innerHeight + scrollY >= document.documentElement.scrollHeight - 120;
    };
    addEventListener('scroll', onScroll, { passive: true });
    return () => removeEventListener('scroll', onScroll);
  }, []);
  useEffect(() => {
    if (following.current) scrollTo(0, document.documentElement.scrollHeight);
  }, [version]);
  useEffect(() => {
    const el = sentinel.current;
    if (!el || first === 0) return;
    const io = new IntersectionObserver((entries) => {
      if (!following.current && entries.some((en) => en.isIntersecting)) setExtra((x) => x + WINDOW_BLOCKS);
    });
    io.observe(el);
    return () => io.disconnect();
  }, [first]);
  return (
    <div id="transcript" data-version={version} data-rows={model.rowCount}>
      {first > 0 && (
        <div ref={sentinel} class="earlier">
          <button type="button" class="link" onClick={() => setExtra((x) => x + WINDOW_BLOCKS)}>
            Show earlier ({first * BLOCK_ROWS} more)
          </button>
        </div>
      )}
      {model.blocks.slice(first).map((rows, i) => (
        <Block key={first + i} rows={rows} />
      ))}
    </div>
  );
}

function Confirmation({ apiKey, id, pending, onError }: { apiKey: string; id: string; pending: AgentEvent[]; onError: (m: string) => void }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const answer = async (accept: boolean) => {
    setBusy(true);
    try {
      await api(apiKey, 'POST', `/app-conversations/${id}/respond-to-confirmation`, accept ? { accept } : { accept, ...(reason.trim() ? { reason: reason.trim() } : {}) });
      setReason('');
    } catch (err) {
      onError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="confirm" id="confirmation" role="alert">
      <h3>The agent waits for your confirmation</h3>
      <ul>
        {pending.map((e) => (
          <li key={e.id}>
            <code>{String(e['tool_name'])}</code> {typeof e['summary'] === 'string' ? e['summary'] : ''}
          </li>
        ))}
      </ul>
      <label for="reject-reason">Reason if you reject (optional)</label>
      <input id="reject-reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => void answer(true)}>Approve</button>
        <button type="button" class="danger" disabled={busy} onClick={() => void answer(false)}>Reject</button>
      </div>
    </section>
  );
}

function Rename({ apiKey, id, title, onDone }: { apiKey: string; id: string; title: string; onDone: () => void }) {
  const [value, setValue] = useState(title);
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await api(apiKey, 'PATCH', `/app-conversations/${id}`, { title: value.trim() });
      onDone();
    } catch (err) {
      setError(err instanceof ApiError ? (err.forField('title') ?? err.message) : String(err));
    }
  };
  return (
    <form class="rename" onSubmit={submit}>
      <label for="title-input" class="visually-hidden">Title</label>
      <input id="title-input" value={value} aria-invalid={error ? true : undefined} aria-describedby={error ? 'title-error' : undefined} onInput={(e) => setValue(e.currentTarget.value)} />
      <button type="submit">Save</button>
      <button type="button" class="link" onClick={onDone}>Cancel</button>
      {error && <p class="field-error" id="title-error" role="alert">{error}</p>}
    </form>
  );
}

/** The trajectory zip, fetched with the key (a link cannot carry it) and saved from a blob URL. */
async function download(apiKey: string, id: string): Promise<void> {
  const res = await fetch(`/api/v1/app-conversations/${id}/download`, { headers: apiKey === COOKIE_SESSION ? {} : { authorization: `Bearer ${apiKey}` } });
  if (!res.ok) throw new ApiError(res.status, `The download failed (HTTP ${res.status})`, []);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = /filename="?([^";]+)/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `${id}.zip`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const POLICIES: Record<string, unknown> = {
  NeverConfirm: { kind: 'NeverConfirm' },
  AlwaysConfirm: { kind: 'AlwaysConfirm' },
  ConfirmRisky: { kind: 'ConfirmRisky' },
};

export function Transcript({ apiKey, id }: { apiKey: string; id: string }) {
  const [conv, setConv] = useState<Conversation | null>();
  const model = useMemo(() => new TranscriptModel(), [id]);
  const [version, setVersion] = useState(0);
  const [feed, setFeed] = useState<FeedState>('loading');
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const [renaming, setRenaming] = useState(false);
  const [tab, setTab] = useState<'transcript' | 'workspace'>('transcript');
  const [reload, setReload] = useState(0);
  const [forking, setForking] = useState<string>();

  // The record (title, sandbox and execution status), pushed by the facade's change stream of this
  // one conversation (changes.ts resumes it after a drop). Polled only where that stream cannot be
  // opened at all.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async (again: boolean) => {
      try {
        const [c] = await api<Conversation[]>(apiKey, 'GET', `/app-conversations?ids=${id}`);
        if (live) setConv(c ?? null);
      } catch (err) {
        if (live) setError((err as Error).message);
      }
      if (live && again) timer = setTimeout(() => void load(true), 2000);
    };
    const changes = new ConversationChanges(apiKey, `id__eq=${encodeURIComponent(id)}&include_sub_conversations=true&limit=1`, {
      snapshot: (items) => setConv(items[0] ?? null),
      change: (c) => setConv(c),
      remove: () => setConv(null),
      state: () => undefined,
      unavailable: () => void load(true),
    });
    changes.start();
    return () => {
      live = false;
      clearTimeout(timer);
      changes.close();
    };
  }, [apiKey, id]);

  // A rename is the app store's, not a change the stream sees until the conversation's next one: read it once.
  useEffect(() => {
    if (reload === 0) return;
    let live = true;
    api<Conversation[]>(apiKey, 'GET', `/app-conversations?ids=${id}`).then(
      ([c]) => live && setConv(c ?? null),
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [apiKey, id, reload]);

  useEffect(() => {
    // Appends are batched to one render per frame: a burst of events costs one re-render.
    let frame = 0;
    const f = new EventFeed(
      apiKey,
      id,
      (added) => {
        if (!model.add(added) || frame) return;
        frame = requestAnimationFrame(() => {
          frame = 0;
          setVersion((v) => v + 1);
        });
      },
      setFeed,
    );
    f.start().catch((err: Error) => setError(err.message));
    return () => {
      cancelAnimationFrame(frame);
      f.close();
    };
  }, [apiKey, id, model]);

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
  const fork = () =>
    act(async () => {
      setForking('Forking…');
      try {
        const task = await api<{ id: string }>(apiKey, 'POST', `/app-conversations/${id}/fork`, {});
        location.hash = `#/c/${await awaitConversation(apiKey, task.id, (st) => setForking(`Forking… (${st})`))}`;
      } finally {
        setForking(undefined);
      }
    });

  if (conv === null) return <p class="card">This conversation does not exist. <a href="#/">Back to the list</a></p>;
  const sandbox = conv?.sandbox_id;
  const execution = model.executionStatus ?? conv?.execution_status ?? undefined;
  const policy = (model.info?.['confirmation_policy'] as { kind?: string } | undefined)?.kind ?? 'NeverConfirm';
  const waiting = execution === 'waiting_for_confirmation';
  return (
    <section class="card conversation">
      <p><a href="#/">← Conversations</a></p>
      {renaming ? (
        <Rename apiKey={apiKey} id={id} title={conv?.title ?? ''} onDone={() => { setRenaming(false); setReload((r) => r + 1); }} />
      ) : (
        <h2 id="conversation-title">
          {conv?.title ?? id}{' '}
          <button type="button" class="link" onClick={() => setRenaming(true)}>Rename</button>
        </h2>
      )}
      <p class="status">
        Sandbox <span class="badge" id="sandbox-status">{conv?.sandbox_status ?? '…'}</span> · Agent <span id="execution-status">{execution ?? '—'}</span> · Transcript{' '}
        <span id="feed-state">{feed}</span>
      </p>
      <div class="actions">
        <button type="button" disabled={!sandbox || conv?.sandbox_status !== 'RUNNING'} onClick={() => act(() => api(apiKey, 'POST', `/sandboxes/${sandbox}/pause`))}>Pause</button>
        <button type="button" disabled={!sandbox || conv?.sandbox_status !== 'PAUSED'} onClick={() => act(() => api(apiKey, 'POST', `/sandboxes/${sandbox}/resume`))}>Resume</button>
        <button type="button" onClick={() => act(() => download(apiKey, id))}>Download trajectory</button>
        <button type="button" id="fork" disabled={forking !== undefined} onClick={() => void fork()}>Fork</button>
        {forking && <span class="muted" role="status">{forking}</span>}
        <label class="inline">
          Confirmation{' '}
          <select
            id="confirmation-policy"
            value={policy}
            disabled={conv?.sandbox_status !== 'RUNNING'}
            onChange={(e) => {
              const kind = e.currentTarget.value;
              void act(async () => {
                await api(apiKey, 'POST', `/app-conversations/${id}/confirmation-policy`, { policy: POLICIES[kind] });
                model.info = { ...model.info, confirmation_policy: POLICIES[kind] };
                setVersion((v) => v + 1);
              });
            }}
          >
            <option value="NeverConfirm">never</option>
            <option value="ConfirmRisky">risky actions</option>
            <option value="AlwaysConfirm">every action</option>
          </select>
        </label>
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
      {waiting && <Confirmation apiKey={apiKey} id={id} pending={model.pendingActions()} onError={setError} />}
      <div class="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === 'transcript'} onClick={() => setTab('transcript')}>Transcript</button>
        <button type="button" role="tab" id="workspace-tab" aria-selected={tab === 'workspace'} onClick={() => setTab('workspace')}>Files and changes</button>
      </div>
      {tab === 'transcript' ? (
        <>
          <Rows model={model} version={version} />
          <form onSubmit={send} class="followup">
            <label for="followup">Message the agent</label>
            <textarea id="followup" rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
            <button type="submit">Send</button>
          </form>
        </>
      ) : (
        <Workspace apiKey={apiKey} id={id} />
      )}
    </section>
  );
}
