// The admin console (administrators only): the installation's license (validity, seats, signature;
// the id only masked, as the API gives it) and the support-bundle upload; Sandbox Configuration — Idle Time, Deletion Time and
// the sandbox capacity, deployment-wide, taken up by the controller at once — with the audit trail
// of who changed what; users and their roles; the sandboxes of every user. Anyone else gets the
// API's 403, and this page says so.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.ts';
import { asApiError, FieldError, FormError, invalid, Saved } from './forms.tsx';

type Field = 'idle_time_seconds' | 'deletion_time_seconds' | 'sandbox_capacity';
interface Config {
  idle_time_seconds: number;
  deletion_time_seconds: number;
  sandbox_capacity: number;
  defaults: Record<Field, number>;
  overridden: Field[];
  changes: { time: string; user_id: string | null; user_name: string | null; outside_api: boolean; field_manager: string | null; object_deleted: boolean; field: Field; from: number | null; to: number | null }[];
}
interface User {
  id: string;
  name: string;
  admin: boolean;
  created_at: string;
  disabled_at: string | null;
}
interface AdminSandbox {
  id: string;
  owner_id: string | null;
  owner_name: string | null;
  status: string;
  status_detail: string | null;
  conversation_count: number;
  created_at: string | null;
  last_activity_at: string | null;
}

interface LicenseStatus {
  status: 'valid' | 'expired' | 'unlicensed';
  message: string;
  customer?: string;
  email?: string;
  license_id?: string;
  issued_at?: string;
  expires_at?: string;
  days_left?: number;
  seats?: number | null;
  seats_used: number;
  seats_exceeded: boolean;
  signature?: 'verified' | 'unverified';
}
interface BundleUpload {
  uploaded_to: string;
  status: number;
  attempts: number;
  bytes: number;
  files: string[];
  receipt: string;
}

/** A valid license this close to its end is shown as expiring soon (the API gives days_left). */
const EXPIRING_SOON_DAYS = 30;

const LABELS: Record<Field, string> = { idle_time_seconds: 'Idle Time (seconds)', deletion_time_seconds: 'Deletion Time (seconds)', sandbox_capacity: 'Sandbox capacity' };
const HELP: Record<Field, string> = {
  idle_time_seconds: 'After this long without agent or user activity a running sandbox is paused.',
  deletion_time_seconds: 'After this long paused, a sandbox and its conversations are deleted permanently.',
  sandbox_capacity: 'Sandboxes that may be starting or running at once; past it, starts are refused (429).',
};
const FIELDS: Field[] = ['idle_time_seconds', 'deletion_time_seconds', 'sandbox_capacity'];

function duration(seconds: number | null): string {
  if (seconds === null) return 'default';
  if (seconds % 86400 === 0) return `${seconds} (${seconds / 86400} d)`;
  if (seconds % 3600 === 0) return `${seconds} (${seconds / 3600} h)`;
  if (seconds % 60 === 0) return `${seconds} (${seconds / 60} min)`;
  return String(seconds);
}

function SandboxConfiguration({ apiKey, config, onSaved }: { apiKey: string; config: Config; onSaved: (c: Config) => void }) {
  const [values, setValues] = useState<Record<Field, string>>(() => Object.fromEntries(FIELDS.map((f) => [f, String(config[f])])) as Record<Field, string>);
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setSaved(false);
    const body: Record<string, unknown> = {};
    for (const f of FIELDS) {
      const raw = values[f].trim();
      // Empty: back to the default. Anything else goes to the API as typed, which says what is wrong with it.
      if (raw === '') body[f] = null;
      else if (raw !== String(config[f]) || config.overridden.includes(f)) body[f] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    }
    try {
      const next = await api<Config>(apiKey, 'PATCH', '/admin/sandbox-configuration', body);
      setValues(Object.fromEntries(FIELDS.map((f) => [f, String(next[f])])) as Record<Field, string>);
      onSaved(next);
      setSaved(true);
    } catch (err) {
      setError(asApiError(err));
    }
  };
  return (
    <form class="card" onSubmit={save} id="sandbox-configuration" aria-labelledby="config-title">
      <h2 id="config-title">Sandbox Configuration</h2>
      <p class="muted">Deployment-wide. The controller applies a change at once, to running and paused sandboxes too. Leave a field empty to go back to its default.</p>
      <div class="row3">
        {FIELDS.map((f) => (
          <div key={f}>
            <label for={`cfg-${f}`}>{LABELS[f]}</label>
            <input id={`cfg-${f}`} inputMode="numeric" {...invalid(error, f, `cfg-${f}-error`)} value={values[f]} onInput={(e) => { setSaved(false); setValues({ ...values, [f]: e.currentTarget.value }); }} />
            <FieldError error={error} field={f} id={`cfg-${f}-error`} />
            <p class="muted small">{HELP[f]} Default: {config.defaults[f]}{config.overridden.includes(f) ? '' : ' (in use)'}.</p>
          </div>
        ))}
      </div>
      <FormError error={error} fields={FIELDS} />
      <button type="submit" id="save-config">Save Changes</button> {saved && <Saved>Saved; the controller applies it now.</Saved>}
      <h3>Changes</h3>
      {config.changes.length === 0 ? <p class="muted" id="no-changes">No changes yet: the defaults apply.</p> : (
        <table id="config-changes">
          <thead><tr><th>When</th><th>Who</th><th>Setting</th><th>From</th><th>To</th></tr></thead>
          <tbody>
            {config.changes.map((c, i) => (
              <tr key={i}>
                <td class="muted">{new Date(c.time).toLocaleString()}</td>
                <td class={c.outside_api ? 'outside-api' : undefined}>
                  {c.outside_api ? `outside the API (${c.object_deleted ? 'the configuration was deleted' : (c.field_manager ?? 'unknown writer')}; user not known)` : c.user_name}
                </td>
                <td>{LABELS[c.field]}</td>
                <td>{duration(c.from)}</td>
                <td>{duration(c.to)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </form>
  );
}

function Users({ apiKey, me }: { apiKey: string; me: string }) {
  const [users, setUsers] = useState<User[]>();
  const [error, setError] = useState<string>();
  const load = () => void api<{ items: User[] }>(apiKey, 'GET', '/users').then((r) => setUsers(r.items), (e) => setError(asApiError(e).message));
  useEffect(load, [apiKey]);
  const act = async (method: string, path: string) => {
    setError(undefined);
    try {
      await api(apiKey, method, path);
      load();
    } catch (err) {
      setError(asApiError(err).message);
    }
  };
  return (
    <section class="card" aria-labelledby="users-title">
      <h2 id="users-title">Users and roles</h2>
      {error && <p class="field-error" role="alert">{error}</p>}
      {users === undefined ? <p class="muted">Loading…</p> : (
        <table id="users">
          <thead><tr><th>User</th><th>Role</th><th>Status</th><th></th></tr></thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id} data-user={u.name}>
                <td>{u.name}{u.id === me ? <span class="muted"> (you)</span> : null}<div class="muted small"><code>{u.id}</code></div></td>
                <td class="role">{u.admin ? <span class="badge s-running">administrator</span> : 'user'}</td>
                <td class="state">{u.disabled_at ? <span class="badge s-error">disabled</span> : 'active'}</td>
                <td class="actions">
                  {u.id !== me && (
                    <>
                      {u.admin
                        ? <button type="button" class="secondary" onClick={() => act('DELETE', `/users/${encodeURIComponent(u.id)}/admin`)}>Revoke admin</button>
                        : <button type="button" class="secondary" onClick={() => act('POST', `/users/${encodeURIComponent(u.id)}/admin`)}>Make admin</button>}
                      {u.disabled_at
                        ? <button type="button" class="secondary" onClick={() => act('POST', `/users/${encodeURIComponent(u.id)}/enable`)}>Enable</button>
                        : <button type="button" class="danger" onClick={() => confirm(`Disable ${u.name}? Every key of theirs is refused at once.`) && act('POST', `/users/${encodeURIComponent(u.id)}/disable`)}>Disable</button>}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Sandboxes({ apiKey }: { apiKey: string }) {
  const [items, setItems] = useState<AdminSandbox[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const load = async () => {
      try {
        const r = await api<{ items: AdminSandbox[] }>(apiKey, 'GET', '/admin/sandboxes');
        if (live) setItems(r.items);
      } catch (err) {
        if (live) setError(asApiError(err).message);
      }
      if (live) timer = setTimeout(load, 3000);
    };
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [apiKey]);
  return (
    <section class="card" aria-labelledby="sandboxes-title">
      <h2 id="sandboxes-title">Sandboxes of every user</h2>
      {error && <p class="field-error">{error}</p>}
      {items === undefined ? <p class="muted">Loading…</p> : items.length === 0 ? <p class="muted" id="no-sandboxes">No sandboxes.</p> : (
        <table id="all-sandboxes">
          <thead><tr><th>Sandbox</th><th>Owner</th><th>Status</th><th>Conversations</th><th>Last activity</th></tr></thead>
          <tbody>
            {items.map((s) => (
              <tr key={s.id} data-id={s.id}>
                <td><code>{s.id}</code></td>
                <td class="owner">{s.owner_name ?? s.owner_id ?? '—'}</td>
                <td><span class={`badge s-${s.status.toLowerCase()}`} title={s.status_detail ?? ''}>{s.status}</span></td>
                <td>{s.conversation_count}</td>
                <td class="muted">{s.last_activity_at ? new Date(s.last_activity_at).toLocaleString() : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function licenseState(l: LicenseStatus): { label: string; badge: string } {
  if (l.status === 'unlicensed') return { label: 'None installed', badge: '' };
  if (l.status === 'expired') return { label: 'Expired', badge: 's-error' };
  if ((l.days_left ?? Infinity) <= EXPIRING_SOON_DAYS) return { label: 'Expiring soon', badge: 's-paused' };
  return { label: 'Valid', badge: 's-running' };
}

const day = (iso: string | undefined) => (iso ? new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' }) : '—');

function License({ apiKey }: { apiKey: string }) {
  const [l, setL] = useState<LicenseStatus>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<LicenseStatus>(apiKey, 'GET', '/admin/license').then(setL, (e) => setError(asApiError(e).message));
  }, [apiKey]);
  const state = l && licenseState(l);
  return (
    <section class="card" id="license" aria-labelledby="license-title">
      <h2 id="license-title">License</h2>
      {error && <p class="field-error" role="alert">{error}</p>}
      {!l || !state ? (!error && <p class="muted">Loading…</p>) : (
        <>
          <p>
            <span id="license-state" class={`badge ${state.badge}`}>{state.label}</span>
            {l.signature && <> <span id="license-signature" class={`badge ${l.signature === 'verified' ? 's-running' : 's-paused'}`}>{l.signature === 'verified' ? 'Signature verified' : 'Unverified'}</span></>}
          </p>
          {l.status === 'expired' && (
            <p class="warning" id="license-expired" role="alert">
              <strong>The license expired on {day(l.expires_at)}.</strong> New conversations and sandboxes are refused until a renewed
              license is installed. Nothing is deleted: existing conversations, transcripts and downloads are kept and stay available.
            </p>
          )}
          {l.status === 'unlicensed' ? <p id="license-message">{l.message}</p> : (
            <table id="license-details">
              <tbody>
                <tr><th>Licensee</th><td class="licensee">{l.customer}{l.email && <span class="muted"> ({l.email})</span>}</td></tr>
                <tr><th>License</th><td><code class="license-id">{l.license_id}</code></td></tr>
                <tr><th>Issued</th><td>{day(l.issued_at)}</td></tr>
                <tr><th>Expires</th><td class="expires">{day(l.expires_at)}{l.status === 'valid' && l.days_left !== undefined && <span class="muted"> ({l.days_left} days left)</span>}</td></tr>
                <tr><th>Seats</th><td class="seats">{l.seats == null ? `${l.seats_used} users enabled (no seat limit)` : `${l.seats_used} of ${l.seats} in use`}{l.seats_exceeded && <> <span class="badge s-error">over the limit</span></>}</td></tr>
                <tr><th>Signature</th><td>{l.signature === 'verified' ? "Signed with the vendor's key" : 'Not checked: no vendor key is configured (chart value license.publicKey)'}</td></tr>
              </tbody>
            </table>
          )}
          {l.status !== 'unlicensed' && <p class="muted small" id="license-message">{l.message}</p>}
        </>
      )}
    </section>
  );
}

function SupportBundle({ apiKey }: { apiKey: string }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<BundleUpload>();
  const [error, setError] = useState<ApiError>();
  const upload = async () => {
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      setResult(await api<BundleUpload>(apiKey, 'POST', '/admin/support-bundle'));
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" id="support-bundle" aria-labelledby="bundle-title">
      <h2 id="bundle-title">Support bundle</h2>
      <p class="muted">Collects versions, settings, the Sandbox and Conversation resources, users (without their keys) and the license status, redacted, and uploads it over HTTPS to the installation's support receiver.</p>
      <p><button type="button" id="upload-bundle" disabled={busy} onClick={upload}>{busy ? 'Uploading…' : 'Generate and upload support bundle'}</button></p>
      {result && (
        <div class="notice" id="bundle-result" role="status">
          Uploaded to <code>{result.uploaded_to}</code>: {(result.bytes / 1024).toFixed(1)} KiB ({result.bytes} bytes), {result.files.length} files; the receiver answered {result.status}
          {result.attempts > 1 ? ` after ${result.attempts} attempts` : ''}{result.receipt ? <>: <q class="receipt">{result.receipt}</q></> : '.'}
        </div>
      )}
      {error && (
        <div class="warning" id="bundle-error" role="alert" data-status={error.status}>
          <strong>{error.status === 409 ? 'Support upload is not configured.' : error.status === 502 ? 'The support receiver refused the upload.' : 'The upload failed.'}</strong> {error.message}
        </div>
      )}
    </section>
  );
}

export function AdminPage({ apiKey, me }: { apiKey: string; me: string }) {
  const [config, setConfig] = useState<Config>();
  const [error, setError] = useState<ApiError>();
  useEffect(() => {
    api<Config>(apiKey, 'GET', '/admin/sandbox-configuration').then(setConfig, (e) => setError(asApiError(e)));
  }, [apiKey]);
  if (error?.status === 403) {
    return (
      <section class="card" id="forbidden" aria-labelledby="forbidden-title">
        <h2 id="forbidden-title">Administrators only</h2>
        <p>The admin console is for administrators, and your account is not one. An administrator can grant you the role.</p>
        <p class="muted">{error.message}</p>
        <p><a href="#/">Back to your conversations</a></p>
      </section>
    );
  }
  if (error) return <section class="card"><p class="field-error">{error.message}</p></section>;
  if (!config) return <section class="card"><p class="muted">Loading…</p></section>;
  return (
    <>
      <h1 class="page-title">Admin console</h1>
      <License apiKey={apiKey} />
      <SupportBundle apiKey={apiKey} />
      <SandboxConfiguration apiKey={apiKey} config={config} onSaved={setConfig} />
      <Users apiKey={apiKey} me={me} />
      <Sandboxes apiKey={apiKey} />
    </>
  );
}
