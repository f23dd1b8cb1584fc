// The agentyard web app: sign in with an API key, the conversation list, a new conversation, and
// a conversation's live transcript with follow-ups, pause/resume and delete. Routing is by the
// URL hash (#/c/<id>), so the facade serves one page at `/`.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, COOKIE_SESSION, KEY_REFUSED, KEY_STORAGE, loadSession, logout, type Conversation } from './api.ts';
import { ConversationChanges } from './changes.ts';
import { NewConversation } from './new-conversation.tsx';
import { Transcript } from './transcript.tsx';
import { AdminPage } from './admin.tsx';
import { LaunchPage, pageData, PluginDirectory } from './plugins.tsx';
import { SettingsPage } from './settings.tsx';
import { SkillsPage } from './skills.tsx';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function SignIn({ onKey, refused, oidc }: { onKey: (key: string) => void; refused: boolean | 'session'; oidc: boolean }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(refused === 'session' ? 'Your session has ended (it expired or was signed out). Sign in again.' : refused ? 'The API key was refused (revoked or expired). Sign in again.' : undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return setError('Enter the API key.');
    try {
      await api(k, 'GET', '/app-conversations/count');
      sessionStorage.setItem(KEY_STORAGE, k);
      onKey(k);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'This API key was refused. Use the key `agentyard up` printed, or one from `agentyard keys`.' : String((err as Error).message));
    }
  };
  return (
    <form class="card signin" onSubmit={submit}>
      <h2>Sign in</h2>
      {oidc && (
        <p>
          <a id="oidc-login" href={`/auth/login?return_to=${encodeURIComponent(`/${location.hash}`)}`}>Sign in with your organization's account</a>
          <span class="muted"> — or with an API key:</span>
        </p>
      )}
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      {error && <p class="field-error" id="api-key-error" role="alert">{error}</p>}
      <p class="muted">The key stays in this browser tab (session storage) and is sent only to this service's API.</p>
      <button type="submit">Sign in</button>
    </form>
  );
}

/** How many conversations the list shows (the newest). */
const LIST_SIZE = 50;

function ConversationList({ apiKey }: { apiKey: string }) {
  const [items, setItems] = useState<Conversation[]>();
  const [error, setError] = useState<string>();
  const [query, setQuery] = useState('');
  // Live status pushed by the facade (changes.ts): a snapshot, then each change as it happens.
  useEffect(() => {
    const filter = query.trim() ? `&title__contains=${encodeURIComponent(query.trim())}` : '';
    setItems(undefined);
    const feed = new ConversationChanges(apiKey, `limit=${LIST_SIZE}${filter}`, {
      snapshot: (list) => setItems(list),
      change: (c) =>
        setItems((list = []) => {
          if (list.some((x) => x.id === c.id)) return list.map((x) => (x.id === c.id ? c : x));
          // New: in its place, newest first; past the shown page it stays out, as search would leave it.
          const next = [...list, c].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
          return next.length > LIST_SIZE && next.at(-1)!.id === c.id ? list : next.slice(0, LIST_SIZE);
        }),
      remove: (id) => setItems((list) => list?.filter((x) => x.id !== id)),
      state: (s) => setError(s === 'reconnecting' ? 'The live list lost its connection; reconnecting…' : undefined),
    });
    feed.start();
    return () => feed.close();
  }, [apiKey, query]);
  return (
    <section class="card">
      <h2>Conversations</h2>
      <label for="search" class="visually-hidden">Search by title</label>
      <input id="search" type="search" placeholder="Search by title" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      {error && <p class="field-error">{error}</p>}
      {items === undefined ? (
        <p class="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted" id="no-conversations">{query.trim() ? 'No conversation title contains this.' : 'No conversations yet.'}</p>
      ) : (
        <table id="conversations">
          <thead>
            <tr><th>Title</th><th>Sandbox</th><th>Agent</th><th>Updated</th></tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.id} data-id={c.id}>
                <td><a href={`#/c/${c.id}`}>{c.title ?? c.id}</a></td>
                <td class="sandbox-status"><span class={`badge s-${c.sandbox_status.toLowerCase()}`}>{c.sandbox_status}</span></td>
                <td class="execution-status">{c.execution_status ?? '—'}</td>
                <td class="muted">{new Date(c.updated_at).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY_STORAGE) ?? '');
  const [refused, setRefused] = useState<boolean | 'session'>(false);
  const [oidc, setOidc] = useState(false);
  const hash = useHash();
  const signOut = () => {
    if (key === COOKIE_SESSION) return void logout();
    sessionStorage.removeItem(KEY_STORAGE);
    setKey('');
  };
  // Signed in by a browser session (OIDC login) unless this tab holds a key.
  useEffect(() => {
    void loadSession().then((s) => {
      setOidc(s.oidc);
      if (s.user && !sessionStorage.getItem(KEY_STORAGE)) setKey(COOKIE_SESSION);
    });
  }, []);
  // A key refused (revoked, user disabled) or a session ended while signed in: back to the sign-in form, saying why.
  const current = useRef(key);
  current.current = key;
  useEffect(() => {
    const on = () => {
      if (current.current === COOKIE_SESSION) setRefused('session');
      else if (sessionStorage.getItem(KEY_STORAGE)) setRefused(true);
      else return;
      sessionStorage.removeItem(KEY_STORAGE);
      setKey('');
    };
    addEventListener(KEY_REFUSED, on);
    return () => removeEventListener(KEY_REFUSED, on);
  }, []);
  const open = /^#\/c\/([0-9a-f]{32})$/.exec(hash)?.[1];
  const [served] = useState(pageData);
  // Who is signed in, and whether they are an administrator (the Admin link; the API decides).
  const [me, setMe] = useState<{ id: string; admin: boolean }>();
  useEffect(() => {
    setMe(undefined);
    if (key) api<{ id: string; admin: boolean }>(key, 'GET', '/users/me').then(setMe, () => undefined);
  }, [key]);
  return (
    <>
      <header>
        <a href="/#/" class="brand">agentyard</a>
        <nav>
          <a href="/plugins">Plugin Directory</a>
          {key && <a href="/#/settings">Settings</a>}
          {key && me?.admin && <a href="/#/admin">Admin</a>}
          {key && <button type="button" class="link" onClick={signOut}>Sign out</button>}
        </nav>
      </header>
      <main>
        {/* /plugins and /launch: the server's page data; they work signed out too (the key is asked for at start). */}
        {served?.page === 'plugins' ? (
          <PluginDirectory apiKey={key} catalog={served.plugins} />
        ) : served ? (
          <LaunchPage apiKey={key} data={served} />
        ) : !key ? (
          <SignIn refused={refused} oidc={oidc} onKey={(k) => { setRefused(false); setKey(k); }} />
        ) : open ? (
          <Transcript key={open} apiKey={key} id={open} />
        ) : hash === '#/settings' ? (
          <SettingsPage apiKey={key} />
        ) : hash === '#/settings/skills' ? (
          <SkillsPage apiKey={key} admin={me?.admin === true} />
        ) : hash === '#/admin' ? (
          <AdminPage apiKey={key} me={me?.id ?? ''} />
        ) : (
          <>
            <NewConversation apiKey={key} />
            <ConversationList apiKey={key} />
          </>
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
