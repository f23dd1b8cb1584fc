// The pages' one script (served inline under a nonce). Plain browser JavaScript: it reads the page
// data, lets the user choose and review plugins, and calls the /api/v1 REST API with the API key
// the user typed (kept in sessionStorage for this tab; never put in a URL).
export const CLIENT_SCRIPT = String.raw`
(() => {
  const data = JSON.parse(document.getElementById('page-data').textContent);
  const $ = (id) => document.getElementById(id);
  const KEY = 'agentyard.apiKey';
  const keyInput = $('api-key');
  const trust = $('trust');
  const start = $('start');
  const status = $('status');
  keyInput.value = sessionStorage.getItem(KEY) || '';
  keyInput.addEventListener('change', () => sessionStorage.setItem(KEY, keyInput.value.trim()));

  const blocks = () => Array.from(document.querySelectorAll('section.plugin[data-active="true"]'));
  const ready = () => { start.disabled = !(trust.checked && blocks().length > 0); };
  trust.addEventListener('change', ready);

  if (data.mode === 'directory') {
    const create = $('create');
    const radios = Array.from(document.querySelectorAll('input[name="plugin"]'));
    radios.forEach((r) => r.addEventListener('change', () => { create.disabled = false; }));
    create.addEventListener('click', () => {
      const chosen = radios.find((r) => r.checked);
      if (!chosen) return;
      document.querySelectorAll('section.plugin').forEach((s) => {
        const on = s.dataset.index === chosen.value;
        s.hidden = !on;
        s.dataset.active = on ? 'true' : 'false';
      });
      trust.checked = false;
      $('review').hidden = false;
      ready();
      $('review').scrollIntoView();
    });
  }
  ready();

  const say = (text, kind) => { status.textContent = text; status.dataset.kind = kind || 'info'; };
  const api = async (method, path, body) => {
    const key = keyInput.value.trim();
    const res = await fetch(path, {
      method,
      headers: Object.assign({ authorization: 'Bearer ' + key }, body ? { 'content-type': 'application/json' } : {}),
      body: body ? JSON.stringify(body) : undefined,
    });
    let payload = null;
    try { payload = await res.json(); } catch (e) { payload = null; }
    if (res.status === 401) { sessionStorage.removeItem(KEY); throw new Error('The API key was refused. Enter a valid key.'); }
    if (!res.ok) {
      const d = payload && payload.detail;
      const text = Array.isArray(d) ? d.map((x) => (x.loc || []).join('.') + ': ' + x.msg).join('; ') : (typeof d === 'string' ? d : 'HTTP ' + res.status);
      throw new Error(text);
    }
    return payload;
  };

  const pluginsToStart = () => blocks().map((block) => {
    const spec = data.plugins[Number(block.dataset.index)];
    const out = { source: spec.source };
    if (spec.ref) out.ref = spec.ref;
    if (spec.repo_path) out.repo_path = spec.repo_path;
    const inputs = Array.from(block.querySelectorAll('[data-param]'));
    if (inputs.length > 0) {
      out.parameters = {};
      for (const input of inputs) {
        const name = input.dataset.param;
        const kind = typeof spec.parameters[name];
        out.parameters[name] = kind === 'boolean' ? input.checked : kind === 'number' ? Number(input.value) : input.value;
      }
    }
    return out;
  });

  start.addEventListener('click', async () => {
    if (!trust.checked) { say('Confirm that you trust the plugins first.', 'error'); return; }
    if (!keyInput.value.trim()) { say('Enter your API key first.', 'error'); keyInput.focus(); return; }
    sessionStorage.setItem(KEY, keyInput.value.trim());
    const text = $('message').value.trim();
    const body = { plugins: pluginsToStart() };
    if (text) body.initial_message = { role: 'user', content: [{ type: 'text', text }], run: true };
    start.disabled = true;
    try {
      say('Starting the conversation…');
      const task = await api('POST', '/api/v1/app-conversations', body);
      $('task-id').textContent = task.id;
      for (;;) {
        const [t] = await api('GET', '/api/v1/app-conversations/start-tasks?ids=' + encodeURIComponent(task.id));
        if (t && t.status === 'READY') {
          $('conversation-id').textContent = t.app_conversation_id;
          say('The conversation is ready: ' + t.app_conversation_id, 'done');
          return;
        }
        if (t && t.status === 'ERROR') throw new Error(t.detail || 'The start failed');
        say('Starting the conversation… (' + (t ? t.status : 'WORKING') + ')');
        await new Promise((r) => setTimeout(r, 1000));
      }
    } catch (err) {
      say(err.message, 'error');
      ready();
    }
  });
})();
`;
