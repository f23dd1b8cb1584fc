// Settings > Skills: registered marketplaces. Personal ones are the user's; organization ones are
// the installation's, seen by every user and changed by administrators only. Registering makes a
// marketplace's plugins discoverable (listed here from its manifest); Auto-Load attaches them to
// new conversations in its scope.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.ts';
import { asApiError, FieldError, FormError, invalid } from './forms.tsx';
import { SettingsTabs } from './settings.tsx';

interface Marketplace {
  name: string;
  url: string;
  ref: string | null;
  path: string | null;
  scope: 'personal' | 'organization';
  organization: string | null;
  auto_load: boolean;
}
interface Plugin {
  name: string;
  source: string;
  ref?: string;
  repo_path?: string;
}
interface Plugins {
  status: string;
  plugins: Plugin[];
  detail: string | null;
}

function PluginList({ apiKey, name }: { apiKey: string; name: string }) {
  const [res, setRes] = useState<Plugins>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<Plugins>(apiKey, 'GET', `/settings/marketplaces/${encodeURIComponent(name)}/plugins`).then(setRes, (e) => setError(asApiError(e).message));
  }, [apiKey, name]);
  if (error) return <p class="field-error">{error}</p>;
  if (!res) return <p class="muted">Reading the marketplace…</p>;
  if (res.status !== 'OK') return <p class="field-error plugins-error">{res.detail ?? res.status}</p>;
  if (res.plugins.length === 0) return <p class="muted">The manifest lists no plugins.</p>;
  return (
    <ul class="plugins">
      {res.plugins.map((p) => (
        <li key={p.name}><strong>{p.name}</strong> <code>{p.source}{p.repo_path ? ` · ${p.repo_path}` : ''}{p.ref ? ` @ ${p.ref}` : ''}</code></li>
      ))}
    </ul>
  );
}

function Row({ apiKey, m, admin, reload }: { apiKey: string; m: Marketplace; admin: boolean; reload: () => void }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string>();
  const governed = m.scope === 'organization' && !admin;
  const act = async (method: string, body?: unknown) => {
    setError(undefined);
    try {
      await api(apiKey, method, `/settings/marketplaces/${encodeURIComponent(m.name)}`, body);
      reload();
    } catch (err) {
      setError(asApiError(err).message);
    }
  };
  return (
    <tr data-name={m.name}>
      <td>
        <strong>{m.name}</strong>
        <div class="muted"><code>{m.url}</code>{m.path ? ` · ${m.path}` : ''}{m.ref ? ` @ ${m.ref}` : ''}</div>
        <button type="button" class="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide plugins' : 'Show plugins'}</button>
        {open && <PluginList apiKey={apiKey} name={m.name} />}
        {error && <p class="field-error" role="alert">{error}</p>}
      </td>
      <td>{m.scope === 'organization' ? <>Organization <code>{m.organization}</code></> : 'Personal'}</td>
      <td>
        <label class="inline"><input type="checkbox" checked={m.auto_load} disabled={governed} onChange={(e) => act('PATCH', { auto_load: e.currentTarget.checked })} /> Auto-Load</label>
      </td>
      <td>{governed ? <span class="muted">Managed by administrators</span> : <button type="button" class="danger" onClick={() => confirm(`Unregister ${m.name}?`) && act('DELETE')}>Remove</button>}</td>
    </tr>
  );
}

export function SkillsPage({ apiKey, admin }: { apiKey: string; admin: boolean }) {
  const [items, setItems] = useState<Marketplace[]>();
  const [loadError, setLoadError] = useState<string>();
  const [form, setForm] = useState({ name: '', url: '', ref: '', path: '', scope: 'personal', organization: '', auto_load: false });
  const [error, setError] = useState<ApiError>();
  const reload = () => void api<{ items: Marketplace[] }>(apiKey, 'GET', '/settings/marketplaces').then((r) => setItems(r.items), (e) => setLoadError(asApiError(e).message));
  useEffect(reload, [apiKey]);
  const register = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const body: Record<string, unknown> = { name: form.name.trim(), url: form.url.trim(), scope: form.scope, auto_load: form.auto_load };
    if (form.ref.trim()) body['ref'] = form.ref.trim();
    if (form.path.trim()) body['path'] = form.path.trim();
    if (form.scope === 'organization') body['organization'] = form.organization.trim();
    try {
      await api(apiKey, 'POST', '/settings/marketplaces', body);
      setForm({ name: '', url: '', ref: '', path: '', scope: form.scope, organization: '', auto_load: false });
      reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };
  const set = (patch: Partial<typeof form>) => setForm({ ...form, ...patch });
  const fields = ['name', 'url', 'ref', 'path', 'organization', 'scope'];
  return (
    <>
      <SettingsTabs current="skills" />
      <section class="card" aria-labelledby="skills-title">
        <h2 id="skills-title">Skills: registered marketplaces</h2>
        <p class="muted">Registering a marketplace makes its plugins discoverable; it loads nothing. With Auto-Load on, its plugins attach to the new conversations in its scope (personal: all of yours; organization: those on that organization's repositories). Organization marketplaces are visible to every user and managed by administrators.</p>
        {loadError && <p class="field-error">{loadError}</p>}
        {items === undefined ? <p class="muted">Loading…</p> : items.length === 0 ? <p class="muted" id="no-marketplaces">No marketplaces registered.</p> : (
          <table id="marketplaces">
            <thead><tr><th>Marketplace</th><th>Scope</th><th>Auto-Load</th><th></th></tr></thead>
            <tbody>{items.map((m) => <Row key={`${m.scope}/${m.name}`} apiKey={apiKey} m={m} admin={admin} reload={reload} />)}</tbody>
          </table>
        )}
      </section>
      <form class="card" onSubmit={register} id="marketplace-form" aria-labelledby="register-title">
        <h2 id="register-title">Register a marketplace</h2>
        <div class="row">
          <div>
            <label for="mp-name">Name</label>
            <input id="mp-name" autocomplete="off" {...invalid(error, 'name', 'mp-name-error')} value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} />
            <FieldError error={error} field="name" id="mp-name-error" />
          </div>
          <div>
            <label for="mp-url">Repository URL (http or https, without credentials)</label>
            <input id="mp-url" autocomplete="off" {...invalid(error, 'url', 'mp-url-error')} value={form.url} onInput={(e) => set({ url: e.currentTarget.value })} />
            <FieldError error={error} field="url" id="mp-url-error" />
          </div>
        </div>
        <div class="row">
          <div>
            <label for="mp-ref">Branch, tag or commit (optional)</label>
            <input id="mp-ref" {...invalid(error, 'ref', 'mp-ref-error')} value={form.ref} onInput={(e) => set({ ref: e.currentTarget.value })} />
            <FieldError error={error} field="ref" id="mp-ref-error" />
          </div>
          <div>
            <label for="mp-path">Directory in the repository (optional)</label>
            <input id="mp-path" {...invalid(error, 'path', 'mp-path-error')} value={form.path} onInput={(e) => set({ path: e.currentTarget.value })} />
            <FieldError error={error} field="path" id="mp-path-error" />
          </div>
        </div>
        <div class="row">
          <div>
            <label for="mp-scope">Scope</label>
            <select id="mp-scope" value={form.scope} onChange={(e) => set({ scope: e.currentTarget.value })}>
              <option value="personal">Personal</option>
              <option value="organization" disabled={!admin}>Organization{admin ? '' : ' (administrators only)'}</option>
            </select>
          </div>
          {form.scope === 'organization' && (
            <div>
              <label for="mp-organization">Organization on the Git host</label>
              <input id="mp-organization" {...invalid(error, 'organization', 'mp-organization-error')} value={form.organization} onInput={(e) => set({ organization: e.currentTarget.value })} />
              <FieldError error={error} field="organization" id="mp-organization-error" />
            </div>
          )}
        </div>
        <label class="inline"><input type="checkbox" id="mp-auto-load" checked={form.auto_load} onChange={(e) => set({ auto_load: e.currentTarget.checked })} /> Auto-Load its plugins into new conversations</label>
        <FormError error={error} fields={fields} />
        <button type="submit">Register marketplace</button>
      </form>
    </>
  );
}
