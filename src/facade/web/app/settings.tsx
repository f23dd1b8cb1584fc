// Settings (per user): Sandbox Grouping Strategy and Git login saved together with Save Changes
// (the Git host token goes into the stored secret `<PROVIDER>_TOKEN`, which clones use); stored
// secrets (values go in, never come back); API keys (a new key is shown once, then only its prefix).
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.ts';
import { asApiError, FieldError, FormError, invalid, Saved } from './forms.tsx';

const GROUPINGS: [string, string][] = [
  ['NO_GROUPING', 'No grouping — a new sandbox for each conversation'],
  ['GROUP_BY_NEWEST', 'Group by newest — the newest available sandbox'],
  ['LEAST_RECENTLY_USED', 'Least recently used — the least recently used available sandbox'],
  ['FEWEST_CONVERSATIONS', 'Fewest conversations — the available sandbox with the fewest conversations'],
  ['ADD_TO_ANY', 'Add to any — the first available sandbox'],
];
const PROVIDERS = ['github', 'gitlab', 'bitbucket', 'forgejo'];

interface Settings {
  sandbox_grouping_strategy: string;
  git_login: string | null;
  git_login_provider: string;
}
interface SecretInfo {
  name: string;
  description: string | null;
}
interface KeyInfo {
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

const tokenName = (provider: string) => `${provider.toUpperCase()}_TOKEN`;

function GeneralSettings({ apiKey, secrets, onSecretsChanged }: { apiKey: string; secrets: SecretInfo[]; onSecretsChanged: () => void }) {
  const [form, setForm] = useState<Settings>();
  const [token, setToken] = useState('');
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    api<Settings>(apiKey, 'GET', '/settings').then(setForm, (e) => setError(asApiError(e)));
  }, [apiKey]);
  if (!form) return <section class="card"><h2>Settings</h2>{error ? <p class="field-error">{error.message}</p> : <p class="muted">Loading…</p>}</section>;
  const set = (patch: Partial<Settings>) => {
    setSaved(false);
    setForm({ ...form, ...patch });
  };
  const hasToken = secrets.some((s) => s.name === tokenName(form.git_login_provider));
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      const login = form.git_login?.trim() ? form.git_login.trim() : null;
      setForm(await api<Settings>(apiKey, 'POST', '/settings', { sandbox_grouping_strategy: form.sandbox_grouping_strategy, git_login: login, git_login_provider: form.git_login_provider }));
      if (token) {
        const name = tokenName(form.git_login_provider);
        // The token is a stored secret like any other: replaced when it exists, else created.
        if (hasToken) await api(apiKey, 'PATCH', `/secrets/${name}`, { value: token });
        else await api(apiKey, 'POST', '/secrets', { name, value: token, description: `Git host token (${form.git_login_provider})` });
        setToken('');
        onSecretsChanged();
      }
      setSaved(true);
    } catch (err) {
      const e2 = asApiError(err);
      // A token refused by the secrets API is this form's token field.
      setError(token && e2.fields.some((f) => f.loc.includes('value')) ? new ApiError(e2.status, e2.message, e2.fields.map((f) => ({ ...f, loc: [...f.loc, 'git_token'] }))) : e2);
    }
  };
  return (
    <form class="card" onSubmit={save} aria-labelledby="settings-title" id="settings-form">
      <h2 id="settings-title">Settings</h2>
      <label for="grouping">Sandbox Grouping Strategy</label>
      <select id="grouping" {...invalid(error, 'sandbox_grouping_strategy', 'grouping-error')} value={form.sandbox_grouping_strategy} onChange={(e) => set({ sandbox_grouping_strategy: e.currentTarget.value })}>
        {GROUPINGS.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
      </select>
      <p class="muted">Where your new conversations are placed. Conversations that share a sandbox share its files, credentials and failures.</p>
      <FieldError error={error} field="sandbox_grouping_strategy" id="grouping-error" />
      <h3>Git login</h3>
      <div class="row">
        <div>
          <label for="git-provider">Git host</label>
          <select id="git-provider" value={form.git_login_provider} onChange={(e) => set({ git_login_provider: e.currentTarget.value })}>
            {PROVIDERS.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </div>
        <div>
          <label for="git-login">Login on the Git host</label>
          <input id="git-login" autocomplete="off" {...invalid(error, 'git_login', 'git-login-error')} value={form.git_login ?? ''} onInput={(e) => set({ git_login: e.currentTarget.value })} />
          <FieldError error={error} field="git_login" id="git-login-error" />
        </div>
      </div>
      <label for="git-token">Token for {form.git_login_provider} ({hasToken ? `stored as ${tokenName(form.git_login_provider)}; type to replace it` : 'optional'})</label>
      <input id="git-token" type="password" autocomplete="new-password" {...invalid(error, 'git_token', 'git-token-error')} value={token} onInput={(e) => { setSaved(false); setToken(e.currentTarget.value); }} />
      <FieldError error={error} field="git_token" id="git-token-error" />
      <p class="muted">Your user skills come from your configuration repository on this host; the token clones private repositories. It is never shown again.</p>
      <FormError error={error} fields={['sandbox_grouping_strategy', 'git_login', 'git_token']} />
      <button type="submit" id="save-settings">Save Changes</button> {saved && <Saved>Saved.</Saved>}
    </form>
  );
}

function Secrets({ apiKey, secrets, reload }: { apiKey: string; secrets: SecretInfo[]; reload: () => void }) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<ApiError>();
  const [replacing, setReplacing] = useState<string>();
  const [replacement, setReplacement] = useState('');
  const [rowError, setRowError] = useState<ApiError>();
  const add = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await api(apiKey, 'POST', '/secrets', { name: name.trim(), value, description: description.trim() || null });
      setName('');
      setValue('');
      setDescription('');
      reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  const replace = async (secret: string) => {
    setRowError(undefined);
    try {
      await api(apiKey, 'PATCH', `/secrets/${encodeURIComponent(secret)}`, { value: replacement });
      setReplacing(undefined);
      setReplacement('');
      reload();
    } catch (err) {
      setRowError(asApiError(err));
    }
  };
  const remove = async (secret: string) => {
    if (!confirm(`Delete the secret ${secret}? Conversations started afterwards will not have it.`)) return;
    try {
      await api(apiKey, 'DELETE', `/secrets/${encodeURIComponent(secret)}`);
      reload();
    } catch (err) {
      setRowError(asApiError(err));
    }
  };
  return (
    <section class="card" aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <p class="muted">Given to each conversation you start, as environment variables of the commands that name them. Values are never shown again.</p>
      {secrets.length === 0 ? <p class="muted" id="no-secrets">No stored secrets.</p> : (
        <table id="secrets">
          <thead><tr><th>Name</th><th>Description</th><th></th></tr></thead>
          <tbody>
            {secrets.map((s) => (
              <tr key={s.name} data-name={s.name}>
                <td><code>{s.name}</code></td>
                <td>{s.description ?? ''}</td>
                <td class="actions">
                  {replacing === s.name ? (
                    <>
                      <label for={`replace-${s.name}`} class="visually-hidden">New value of {s.name}</label>
                      <input id={`replace-${s.name}`} type="password" autocomplete="new-password" value={replacement} onInput={(e) => setReplacement(e.currentTarget.value)} />
                      <button type="button" onClick={() => replace(s.name)}>Save value</button>
                      <button type="button" class="secondary" onClick={() => setReplacing(undefined)}>Cancel</button>
                    </>
                  ) : (
                    <>
                      <button type="button" class="secondary" onClick={() => { setReplacing(s.name); setReplacement(''); }}>Replace</button>
                      <button type="button" class="danger" onClick={() => remove(s.name)}>Delete</button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {rowError && <p class="field-error" role="alert">{rowError.message}</p>}
      <form onSubmit={add} id="secret-form">
        <h3>Add a secret</h3>
        <div class="row">
          <div>
            <label for="secret-name">Name</label>
            <input id="secret-name" autocomplete="off" {...invalid(error, 'name', 'secret-name-error')} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            <FieldError error={error} field="name" id="secret-name-error" />
          </div>
          <div>
            <label for="secret-value">Value</label>
            <input id="secret-value" type="password" autocomplete="new-password" {...invalid(error, 'value', 'secret-value-error')} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
            <FieldError error={error} field="value" id="secret-value-error" />
          </div>
        </div>
        <label for="secret-description">Description (optional)</label>
        <input id="secret-description" {...invalid(error, 'description', 'secret-description-error')} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        <FieldError error={error} field="description" id="secret-description-error" />
        <FormError error={error} fields={['name', 'value', 'description']} />
        <button type="submit">Add secret</button>
      </form>
    </section>
  );
}

function ApiKeys({ apiKey }: { apiKey: string }) {
  const [keys, setKeys] = useState<KeyInfo[]>();
  const [fresh, setFresh] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const load = () => api<{ items: KeyInfo[] }>(apiKey, 'GET', '/users/me/keys').then((r) => setKeys(r.items), (e) => setError(asApiError(e)));
  useEffect(() => void load(), [apiKey]);
  const create = async () => {
    setError(undefined);
    try {
      setFresh((await api<{ key: string }>(apiKey, 'POST', '/users/me/keys')).key);
      await load();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  const revoke = async (prefix: string) => {
    // Revoking the key this tab signed in with signs it out on the next request.
    const own = apiKey.startsWith(prefix);
    if (!confirm(own ? `Revoke ${prefix}…? It is the key you are signed in with: you will be signed out.` : `Revoke ${prefix}…? Anything using it is refused from now on.`)) return;
    try {
      await api(apiKey, 'DELETE', `/users/me/keys/${encodeURIComponent(prefix)}`);
      await load();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {fresh && (
        <div class="notice" id="new-key">
          <p><strong>Your new API key.</strong> Copy it now: it is shown this once and never again.</p>
          <pre id="new-key-value">{fresh}</pre>
          <button type="button" class="secondary" onClick={() => setFresh(undefined)}>Done</button>
        </div>
      )}
      {keys === undefined ? <p class="muted">Loading…</p> : (
        <table id="api-keys">
          <thead><tr><th>Key</th><th>Created</th><th>Status</th><th></th></tr></thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.prefix + k.created_at} data-prefix={k.prefix}>
                <td><code>{k.prefix}…</code>{apiKey.startsWith(k.prefix) && !k.revoked_at ? <span class="muted"> (this session)</span> : null}</td>
                <td class="muted">{new Date(k.created_at).toLocaleString()}</td>
                <td>{k.revoked_at ? <span class="badge s-error">revoked</span> : <span class="badge s-running">active</span>}</td>
                <td>{!k.revoked_at && <button type="button" class="danger" onClick={() => revoke(k.prefix)}>Revoke</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {error && <p class="field-error" role="alert">{error.message}</p>}
      <button type="button" id="create-key" onClick={create}>Create API key</button>
    </section>
  );
}

export function SettingsPage({ apiKey }: { apiKey: string }) {
  const [secrets, setSecrets] = useState<SecretInfo[]>([]);
  const reload = () => void api<{ items: SecretInfo[] }>(apiKey, 'GET', '/secrets/search').then((r) => setSecrets(r.items), () => undefined);
  useEffect(reload, [apiKey]);
  return (
    <>
      <SettingsTabs current="general" />
      <GeneralSettings apiKey={apiKey} secrets={secrets} onSecretsChanged={reload} />
      <Secrets apiKey={apiKey} secrets={secrets} reload={reload} />
      <ApiKeys apiKey={apiKey} />
    </>
  );
}

export function SettingsTabs({ current }: { current: 'general' | 'skills' }) {
  return (
    <nav class="tabs" aria-label="Settings">
      <a href="#/settings" aria-current={current === 'general' ? 'page' : undefined}>Settings</a>
      <a href="#/settings/skills" aria-current={current === 'skills' ? 'page' : undefined}>Skills</a>
    </nav>
  );
}
