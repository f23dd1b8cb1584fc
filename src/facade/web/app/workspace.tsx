// A conversation's workspace through the app API's workspace routes: the file browser (files,
// file) and the Git changes with each file's diff (git/changes, git/diff). The agent server gives
// a file's whole text before and after; the line diff is computed here (jsdiff).
import { diffLines } from 'diff';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.ts';

interface Change {
  status: string;
  path: string;
}

function Diff({ original, modified }: { original: string | null; modified: string | null }) {
  const parts = diffLines(original ?? '', modified ?? '');
  return (
    <pre class="diff" id="diff">
      {parts.map((p, i) => (
        <span key={i} class={p.added ? 'add' : p.removed ? 'del' : 'same'}>
          {p.value
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => `${p.added ? '+' : p.removed ? '-' : ' '} ${line}`)
            .join('\n')}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

export function Workspace({ apiKey, id }: { apiKey: string; id: string }) {
  const [files, setFiles] = useState<string[]>();
  const [changes, setChanges] = useState<Change[]>();
  const [open, setOpen] = useState<{ path: string; text?: string; diff?: { original: string | null; modified: string | null } }>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    let live = true;
    setError(undefined);
    void (async () => {
      try {
        const list = await api<string[]>(apiKey, 'GET', `/app-conversations/${id}/files`);
        if (live) setFiles(list);
        // Paths relative to the working directory, as the file listing gives them.
        const ch = await api<Change[]>(apiKey, 'GET', `/app-conversations/${id}/git/changes?path=.`);
        if (live) setChanges(ch);
      } catch (err) {
        if (live) setError((err as Error).message);
      }
    })();
    return () => {
      live = false;
    };
  }, [apiKey, id]);

  const show = async (rel: string, asDiff: boolean) => {
    setError(undefined);
    try {
      if (asDiff) setOpen({ path: rel, diff: await api(apiKey, 'GET', `/app-conversations/${id}/git/diff?path=${encodeURIComponent(rel)}`) });
      else setOpen({ path: rel, text: await api<string>(apiKey, 'GET', `/app-conversations/${id}/file?file_path=${encodeURIComponent(rel)}`) });
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <div class="workspace">
      {error && <p class="field-error" role="alert">{error}</p>}
      <div class="row">
        <div>
          <h3>Files</h3>
          {files === undefined ? (
            <p class="muted">Loading…</p>
          ) : files.length === 0 ? (
            <p class="muted">No files.</p>
          ) : (
            <ul id="files" class="paths">
              {files.map((f) => (
                <li key={f}>
                  <button type="button" class="link" onClick={() => void show(f, false)}>{f}</button>
                </li>
              ))}
            </ul>
          )}
        </div>
        <div>
          <h3>Git changes</h3>
          {changes === undefined ? (
            <p class="muted">Loading…</p>
          ) : changes.length === 0 ? (
            <p class="muted" id="no-changes">No changes (or not a Git repository).</p>
          ) : (
            <ul id="changes" class="paths">
              {changes.map((c) => (
                <li key={c.path}>
                  <span class={`badge git-${c.status.toLowerCase()}`}>{c.status}</span>{' '}
                  <button type="button" class="link" onClick={() => void show(c.path, true)}>{c.path}</button>
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
      {open && (
        <section class="viewer">
          <h3 id="open-path">{open.path}</h3>
          {open.diff ? <Diff original={open.diff.original} modified={open.diff.modified} /> : <pre id="file-content">{open.text}</pre>}
        </section>
      )}
    </div>
  );
}
