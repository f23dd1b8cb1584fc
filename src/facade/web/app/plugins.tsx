// The Plugin Directory (/plugins) and launch links (/launch?plugins=...&message=...) as pages of
// the app. The server parses the link (or reads the instance catalog) and hands the result to the
// page in a JSON block (#page-data, never executed); the page shows where each plugin's code comes
// from and its parameters, asks for trust, and starts a conversation with the signed-in key — or,
// signed out, with a key typed here (kept in this tab's session storage, never in a URL).
import { useState } from 'preact/hooks';
import { api, ApiError, KEY_STORAGE, type StartTask } from './api.ts';

type Param = string | number | boolean;
export interface PluginEntry {
  name?: string;
  description?: string;
  source: string;
  ref?: string;
  repo_path?: string;
  parameters?: Record<string, Param>;
}
export type PageData =
  | { page: 'plugins'; plugins: PluginEntry[] }
  | { page: 'launch'; plugins: PluginEntry[]; message: string }
  | { page: 'launch-error'; title: string; message: string };

/** The server's page data for /plugins and /launch; undefined on any other page. */
export function pageData(): PageData | undefined {
  const el = document.getElementById('page-data');
  return el?.textContent ? (JSON.parse(el.textContent) as PageData) : undefined;
}

function PluginBlock({ p, index, values, onParam }: { p: PluginEntry; index: number; values: Record<string, Param>; onParam: (name: string, v: Param) => void }) {
  const params = Object.entries(p.parameters ?? {});
  return (
    <section class="plugin card" data-index={index} data-active="true">
      <h3>{p.name ?? p.source}</h3>
      {p.description && <p>{p.description}</p>}
      <dl>
        <dt>Repository</dt><dd class="source">{p.source}</dd>
        <dt>Path</dt><dd class="repo-path">{p.repo_path ?? <span class="muted">(repository root)</span>}</dd>
        <dt>Ref</dt><dd class="ref">{p.ref ?? <span class="muted">(default branch)</span>}</dd>
      </dl>
      {params.length > 0 && (
        <fieldset>
          <legend>Parameters</legend>
          {params.map(([name, initial]) => {
            const id = `p${index}-${name}`;
            const v = values[name] ?? initial;
            return typeof initial === 'boolean' ? (
              <label key={name} class="inline"><input type="checkbox" id={id} data-param={name} checked={v === true} onChange={(e) => onParam(name, e.currentTarget.checked)} /> {name}</label>
            ) : (
              <div key={name}>
                <label for={id}>{name}</label>
                {typeof initial === 'number'
                  ? <input id={id} data-param={name} type="number" value={String(v)} onInput={(e) => onParam(name, Number(e.currentTarget.value))} />
                  : <input id={id} data-param={name} type="text" value={String(v)} onInput={(e) => onParam(name, e.currentTarget.value)} />}
              </div>
            );
          })}
        </fieldset>
      )}
    </section>
  );
}

/** Review, trust, start: the part the launch page and the directory share. */
function Starter({ apiKey, plugins, initialMessage }: { apiKey: string; plugins: { p: PluginEntry; index: number }[]; initialMessage: string }) {
  const [message, setMessage] = useState(initialMessage);
  const [typedKey, setTypedKey] = useState(() => sessionStorage.getItem(KEY_STORAGE) ?? '');
  const [trusted, setTrusted] = useState(false);
  const [params, setParams] = useState<Record<number, Record<string, Param>>>({});
  const [status, setStatus] = useState<{ text: string; kind: 'info' | 'error' | 'done' }>();
  const [taskId, setTaskId] = useState('');
  const [conversationId, setConversationId] = useState('');
  const [busy, setBusy] = useState(false);
  const several = plugins.length > 1;
  const start = async () => {
    const key = apiKey || typedKey.trim();
    if (!trusted) return setStatus({ text: 'Confirm that you trust the plugins first.', kind: 'error' });
    if (!key) return setStatus({ text: 'Enter your API key first.', kind: 'error' });
    if (!apiKey) sessionStorage.setItem(KEY_STORAGE, key);
    const body: Record<string, unknown> = {
      plugins: plugins.map(({ p, index }) => ({
        source: p.source,
        ...(p.ref ? { ref: p.ref } : {}),
        ...(p.repo_path ? { repo_path: p.repo_path } : {}),
        ...(p.parameters ? { parameters: { ...p.parameters, ...params[index] } } : {}),
      })),
    };
    if (message.trim()) body['initial_message'] = { role: 'user', content: [{ type: 'text', text: message.trim() }], run: true };
    setBusy(true);
    try {
      setStatus({ text: 'Starting the conversation…', kind: 'info' });
      const task = await api<{ id: string }>(key, 'POST', '/app-conversations', body);
      setTaskId(task.id);
      for (;;) {
        const [t] = await api<StartTask[]>(key, 'GET', `/app-conversations/start-tasks?ids=${encodeURIComponent(task.id)}`);
        if (t?.status === 'READY' && t.app_conversation_id) {
          setConversationId(t.app_conversation_id);
          setStatus({ text: `The conversation is ready: ${t.app_conversation_id}`, kind: 'done' });
          return;
        }
        if (t?.status === 'ERROR') throw new Error(t.detail ?? 'The start failed');
        setStatus({ text: `Starting the conversation… (${t?.status ?? 'WORKING'})`, kind: 'info' });
        await new Promise((r) => setTimeout(r, 1000));
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        sessionStorage.removeItem(KEY_STORAGE);
        setStatus({ text: 'The API key was refused. Enter a valid key.', kind: 'error' });
      } else setStatus({ text: (err as Error).message, kind: 'error' });
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {plugins.map(({ p, index }) => (
        <PluginBlock key={index} p={p} index={index} values={params[index] ?? {}} onParam={(name, v) => setParams({ ...params, [index]: { ...params[index], [name]: v } })} />
      ))}
      <div class="card">
        <p class="warning">A plugin can run commands, use this conversation's secrets and change its files. Start {several ? 'them' : 'it'} only if you trust {several ? 'their' : 'its'} source.</p>
        <label for="message">Message</label>
        <textarea id="message" rows={4} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        {!apiKey && (
          <>
            <label for="api-key">API key</label>
            <input id="api-key" type="password" autocomplete="off" value={typedKey} onInput={(e) => setTypedKey(e.currentTarget.value)} />
            <p class="muted">The key stays in this browser tab (session storage) and is sent only to this service's API.</p>
          </>
        )}
        <label class="inline"><input type="checkbox" id="trust" checked={trusted} onChange={(e) => setTrusted(e.currentTarget.checked)} /> I trust {several ? 'these plugins and their' : 'this plugin and its'} source</label>
        <div><button type="button" id="start" disabled={!trusted || busy || plugins.length === 0} onClick={start}>Start Conversation</button></div>
        <p id="status" role="status" aria-live="polite" data-kind={status?.kind ?? 'info'}>{status?.text ?? ''}</p>
        <p class="muted">Start task: <span id="task-id">{taskId}</span> · Conversation: <span id="conversation-id">{conversationId}</span>{conversationId && <> · <a href={`/#/c/${conversationId}`}>Open it</a></>}</p>
      </div>
    </>
  );
}

export function LaunchPage({ apiKey, data }: { apiKey: string; data: PageData }) {
  if (data.page === 'launch-error') {
    return (
      <section class="card">
        <h1 class="page-title">{data.title}</h1>
        <p id="error">{data.message}</p>
        <p><a href="/plugins">Open the Plugin Directory</a></p>
      </section>
    );
  }
  const plugins = data.plugins.map((p, index) => ({ p, index }));
  return (
    <>
      <h1 class="page-title">Start a conversation with plugins</h1>
      <p>This link starts a new conversation with {plugins.length === 1 ? 'this plugin' : `these ${plugins.length} plugins`}. Review {plugins.length === 1 ? 'it' : 'them'}, adjust the parameters if needed, and confirm.</p>
      <Starter apiKey={apiKey} plugins={plugins} initialMessage={data.page === 'launch' ? data.message : ''} />
    </>
  );
}

export function PluginDirectory({ apiKey, catalog }: { apiKey: string; catalog: PluginEntry[] }) {
  const [picked, setPicked] = useState<number>();
  const [reviewing, setReviewing] = useState<number>();
  if (catalog.length === 0) {
    return (
      <section class="card">
        <h1 class="page-title">Plugin Directory</h1>
        <p>No plugins are configured for this installation. An administrator lists them in the catalog file that AGENTYARD_PLUGIN_CATALOG names.</p>
      </section>
    );
  }
  return (
    <>
      <section class="card">
        <h1 class="page-title">Plugin Directory</h1>
        <p>Plugins offered on this installation. Choose one to start a new conversation with only that plugin.</p>
        <ul class="catalog">
          {catalog.map((p, i) => (
            <li key={i}><label class="inline"><input type="radio" name="plugin" value={String(i)} checked={picked === i} onChange={() => setPicked(i)} /> <strong>{p.name}</strong>{p.description ? ` — ${p.description}` : ''}</label></li>
          ))}
        </ul>
        <button type="button" id="create" disabled={picked === undefined} onClick={() => setReviewing(picked)}>Create New Conversation</button>
      </section>
      {reviewing !== undefined && (
        <div id="review">
          <h2>Review the plugin</h2>
          <Starter key={reviewing} apiKey={apiKey} plugins={[{ p: catalog[reviewing]!, index: reviewing }]} initialMessage="" />
        </div>
      )}
    </>
  );
}
