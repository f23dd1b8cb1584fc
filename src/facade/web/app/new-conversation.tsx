// The new-conversation form: message, repository and branch, plugins (repository, ref, path) and
// per-conversation secrets (name and value; values are write-only: sent once, never shown again).
// A 422 is shown beside the field it names (body.selected_branch, body.plugins.0.source,
// body.secrets.NAME); anything else above the button.
import { useState } from 'preact/hooks';
import { api, ApiError, awaitConversation, type FieldError, type StartTask } from './api.ts';

interface PluginRow {
  source: string;
  ref: string;
  repo_path: string;
}
interface SecretRow {
  name: string;
  value: string;
}

const at = (f: FieldError, ...path: (string | number)[]) => path.every((p, i) => f.loc[i + 1] === p);

export function NewConversation({ apiKey }: { apiKey: string }) {
  const [message, setMessage] = useState('');
  const [repository, setRepository] = useState('');
  const [branch, setBranch] = useState('');
  const [plugins, setPlugins] = useState<PluginRow[]>([]);
  const [secrets, setSecrets] = useState<SecretRow[]>([]);
  const [error, setError] = useState<ApiError>();
  const [status, setStatus] = useState<string>();

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const body: Record<string, unknown> = {};
    if (message.trim()) body['initial_message'] = { role: 'user', content: [{ type: 'text', text: message.trim() }], run: true };
    if (repository.trim()) body['selected_repository'] = repository.trim();
    if (branch.trim()) body['selected_branch'] = branch.trim();
    if (plugins.length > 0) {
      body['plugins'] = plugins.map((p) => ({ source: p.source.trim(), ...(p.ref.trim() ? { ref: p.ref.trim() } : {}), ...(p.repo_path.trim() ? { repo_path: p.repo_path.trim() } : {}) }));
    }
    if (secrets.length > 0) body['secrets'] = Object.fromEntries(secrets.map((s) => [s.name.trim(), s.value]));
    try {
      setStatus('Starting…');
      const task = await api<StartTask>(apiKey, 'POST', '/app-conversations', body);
      const id = await awaitConversation(apiKey, task.id, (st) => setStatus(`Starting… (${st})`));
      setStatus(undefined);
      setMessage('');
      setSecrets([]);
      location.hash = `#/c/${id}`;
    } catch (err) {
      setStatus(undefined);
      setError(err instanceof ApiError ? err : new ApiError(0, String(err), []));
    }
  };

  const fields = error?.fields ?? [];
  const msgs = (match: (f: FieldError) => boolean) => fields.filter(match).map((f) => f.msg);
  const fieldError = (id: string, list: string[]) => (list.length > 0 ? <p class="field-error" id={id} role="alert">{list.join('; ')}</p> : null);
  const invalid = (id: string, list: string[]) => (list.length > 0 ? { 'aria-invalid': true, 'aria-describedby': id } : {});
  const messageErr = msgs((f) => at(f, 'initial_message'));
  const repoErr = msgs((f) => at(f, 'selected_repository'));
  const branchErr = msgs((f) => at(f, 'selected_branch'));
  const placed = (f: FieldError) => ['initial_message', 'selected_repository', 'selected_branch', 'plugins', 'secrets'].includes(String(f.loc[1]));
  const general = error && (fields.length === 0 ? error.message : fields.filter((f) => !placed(f)).map((f) => `${f.loc.join('.')}: ${f.msg}`).join('; ') || undefined);

  const setPlugin = (i: number, k: keyof PluginRow, v: string) => setPlugins((ps) => ps.map((p, j) => (j === i ? { ...p, [k]: v } : p)));
  const setSecret = (i: number, k: keyof SecretRow, v: string) => setSecrets((ss) => ss.map((s, j) => (j === i ? { ...s, [k]: v } : s)));

  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-title">
      <h2 id="new-title">New conversation</h2>
      <label for="message">Message</label>
      <textarea id="message" rows={3} {...invalid('message-error', messageErr)} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      {fieldError('message-error', messageErr)}
      <div class="row">
        <div>
          <label for="repository">Repository (owner/name, optional)</label>
          <input id="repository" {...invalid('repository-error', repoErr)} value={repository} onInput={(e) => setRepository(e.currentTarget.value)} />
          {fieldError('repository-error', repoErr)}
        </div>
        <div>
          <label for="branch">Branch (optional)</label>
          <input id="branch" {...invalid('branch-error', branchErr)} value={branch} onInput={(e) => setBranch(e.currentTarget.value)} />
          {fieldError('branch-error', branchErr)}
        </div>
      </div>
      <fieldset id="plugins">
        <legend>Plugins</legend>
        {plugins.map((p, i) => {
          const err = (k: string) => msgs((f) => at(f, 'plugins', i, k));
          const rowErr = msgs((f) => at(f, 'plugins', i) && !['source', 'ref', 'repo_path'].includes(String(f.loc[3])));
          return (
            <div class="kv" key={i} data-plugin={i}>
              <div>
                <label for={`plugin-${i}-source`}>Repository or URL</label>
                <input id={`plugin-${i}-source`} {...invalid(`plugin-${i}-source-error`, err('source'))} value={p.source} onInput={(e) => setPlugin(i, 'source', e.currentTarget.value)} />
                {fieldError(`plugin-${i}-source-error`, [...err('source'), ...rowErr])}
              </div>
              <div>
                <label for={`plugin-${i}-ref`}>Ref (optional)</label>
                <input id={`plugin-${i}-ref`} {...invalid(`plugin-${i}-ref-error`, err('ref'))} value={p.ref} onInput={(e) => setPlugin(i, 'ref', e.currentTarget.value)} />
                {fieldError(`plugin-${i}-ref-error`, err('ref'))}
                <label for={`plugin-${i}-path`}>Path in the repository (optional)</label>
                <input id={`plugin-${i}-path`} {...invalid(`plugin-${i}-path-error`, err('repo_path'))} value={p.repo_path} onInput={(e) => setPlugin(i, 'repo_path', e.currentTarget.value)} />
                {fieldError(`plugin-${i}-path-error`, err('repo_path'))}
              </div>
              <button type="button" class="danger" onClick={() => setPlugins((ps) => ps.filter((_, j) => j !== i))}>Remove</button>
            </div>
          );
        })}
        {fieldError('plugins-error', msgs((f) => at(f, 'plugins') && typeof f.loc[2] !== 'number'))}
        <button type="button" id="add-plugin" onClick={() => setPlugins((ps) => [...ps, { source: '', ref: '', repo_path: '' }])}>Add a plugin</button>
        <p class="muted">A plugin can run commands, use this conversation's secrets and change its files: add only plugins whose source you trust.</p>
      </fieldset>
      <fieldset id="secrets">
        <legend>Secrets</legend>
        {secrets.map((s, i) => {
          const err = msgs((f) => at(f, 'secrets', s.name.trim()) || (at(f, 'secrets') && f.loc.length === 2));
          return (
            <div class="kv" key={i} data-secret={i}>
              <div>
                <label for={`secret-${i}-name`}>Name</label>
                <input id={`secret-${i}-name`} autocomplete="off" {...invalid(`secret-${i}-error`, err)} value={s.name} onInput={(e) => setSecret(i, 'name', e.currentTarget.value)} />
                {fieldError(`secret-${i}-error`, err)}
              </div>
              <div>
                <label for={`secret-${i}-value`}>Value</label>
                <input id={`secret-${i}-value`} type="password" autocomplete="off" value={s.value} onInput={(e) => setSecret(i, 'value', e.currentTarget.value)} />
              </div>
              <button type="button" class="danger" onClick={() => setSecrets((ss) => ss.filter((_, j) => j !== i))}>Remove</button>
            </div>
          );
        })}
        <button type="button" id="add-secret" onClick={() => setSecrets((ss) => [...ss, { name: '', value: '' }])}>Add a secret</button>
        <p class="muted">Handed to the agent as environment for this conversation only; never shown again.</p>
      </fieldset>
      {general && <p class="field-error" role="alert" id="start-error">{general}</p>}
      <button type="submit" disabled={status !== undefined}>Start conversation</button> {status && <span class="muted" role="status">{status}</span>}
    </form>
  );
}
