// Server-rendered pages: the Plugin Directory, the launch-link review, and the error page for a
// bad link. Every value from a link or the catalog is HTML-escaped; page data for the script goes
// in a JSON block whose "<" are escaped, so nothing from a link can close a tag.
import type { PluginSpec } from '../../api/conversation.ts';
import type { CatalogPlugin } from './catalog.ts';
import { CLIENT_SCRIPT } from './client-script.ts';

export function escapeHtml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

const STYLE = `
body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.6rem} section.plugin{border:1px solid #ccc;border-radius:6px;padding:.75rem 1rem;margin:.75rem 0}
dl{display:grid;grid-template-columns:8rem 1fr;gap:.25rem .75rem} dt{font-weight:600} dd{margin:0;font-family:monospace;word-break:break-all}
label{display:block;margin:.5rem 0} textarea,input[type=text],input[type=password],input[type=number]{width:100%;box-sizing:border-box;padding:.4rem}
.warning{background:#fff4e5;border-left:4px solid #f0a020;padding:.5rem .75rem} #status[data-kind=error]{color:#b00020} #status[data-kind=done]{color:#0a7a2f}
ul.catalog{list-style:none;padding:0} ul.catalog li{margin:.5rem 0} .muted{color:#666}
`;

function page(title: string, nonce: string, body: string, data?: unknown): string {
  const json = data === undefined ? '' : `<script type="application/json" id="page-data">${JSON.stringify(data).replaceAll('<', '\\u003c')}</script>\n<script nonce="${nonce}">${CLIENT_SCRIPT}</script>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · agentyard</title><style nonce="${nonce}">${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
${json}
</body></html>`;
}

function paramInput(index: number, name: string, value: string | number | boolean): string {
  const id = `p${index}-${escapeHtml(name)}`;
  const attrs = `id="${id}" data-param="${escapeHtml(name)}"`;
  if (typeof value === 'boolean') return `<label><input type="checkbox" ${attrs}${value ? ' checked' : ''}> ${escapeHtml(name)}</label>`;
  const type = typeof value === 'number' ? 'number' : 'text';
  return `<label for="${id}">${escapeHtml(name)}<input type="${type}" ${attrs} value="${escapeHtml(String(value))}"></label>`;
}

/** One plugin as the user reviews it before trusting it: where its code comes from, and its parameters. */
function pluginBlock(p: PluginSpec & { name?: string; description?: string }, index: number, active: boolean): string {
  const params = Object.entries(p.parameters ?? {});
  return `<section class="plugin" data-index="${index}" data-active="${active}"${active ? '' : ' hidden'}>
<h3>${escapeHtml(p.name ?? p.source)}</h3>${p.description ? `<p>${escapeHtml(p.description)}</p>` : ''}
<dl><dt>Repository</dt><dd class="source">${escapeHtml(p.source)}</dd>
<dt>Path</dt><dd class="repo-path">${p.repo_path ? escapeHtml(p.repo_path) : '<span class="muted">(repository root)</span>'}</dd>
<dt>Ref</dt><dd class="ref">${p.ref ? escapeHtml(p.ref) : '<span class="muted">(default branch)</span>'}</dd></dl>
${params.length > 0 ? `<fieldset><legend>Parameters</legend>${params.map(([n, v]) => paramInput(index, n, v)).join('\n')}</fieldset>` : ''}
</section>`;
}

function starter(message: string, what: string): string {
  return `<p class="warning">A plugin can run commands, use this conversation's secrets and change its files. Start ${what} only if you trust ${what === 'it' ? 'its' : 'their'} source.</p>
<label for="message">Message<textarea id="message" rows="4">${escapeHtml(message)}</textarea></label>
<label for="api-key">API key<input type="password" id="api-key" autocomplete="off"></label>
<p class="muted">The key stays in this browser tab (session storage) and is sent only to this service's API.</p>
<label><input type="checkbox" id="trust"> I trust ${what === 'it' ? 'this plugin' : 'these plugins'} and ${what === 'it' ? 'its' : 'their'} source</label>
<button type="button" id="start" disabled>Start Conversation</button>
<p id="status" role="status" aria-live="polite"></p>
<p class="muted">Start task: <span id="task-id"></span> · Conversation: <span id="conversation-id"></span></p>`;
}

export function launchPage(plugins: PluginSpec[], message: string, nonce: string): string {
  const body = `<p>This link starts a new conversation with ${plugins.length === 1 ? 'this plugin' : `these ${plugins.length} plugins`}. Review ${plugins.length === 1 ? 'it' : 'them'}, adjust the parameters if needed, and confirm.</p>
${plugins.map((p, i) => pluginBlock(p, i, true)).join('\n')}
${starter(message, plugins.length === 1 ? 'it' : 'them')}`;
  return page('Start a conversation with plugins', nonce, body, { mode: 'launch', plugins });
}

export function directoryPage(catalog: CatalogPlugin[], nonce: string): string {
  if (catalog.length === 0) {
    return page('Plugin Directory', nonce, '<p>No plugins are configured for this installation. An administrator lists them in the catalog file that AGENTYARD_PLUGIN_CATALOG names.</p>');
  }
  const list = catalog
    .map((p, i) => `<li><label><input type="radio" name="plugin" value="${i}"> <strong>${escapeHtml(p.name)}</strong>${p.description ? ` — ${escapeHtml(p.description)}` : ''}</label></li>`)
    .join('\n');
  const body = `<p>Plugins offered on this installation. Choose one to start a new conversation with only that plugin.</p>
<ul class="catalog">${list}</ul>
<button type="button" id="create" disabled>Create New Conversation</button>
<div id="review" hidden><h2>Review the plugin</h2>
${catalog.map((p, i) => pluginBlock(p, i, false)).join('\n')}
${starter('', 'it')}</div>`;
  const plugins = catalog.map(({ source, ref, repo_path, parameters }) => ({ source, ...(ref ? { ref } : {}), ...(repo_path ? { repo_path } : {}), ...(parameters ? { parameters } : {}) }));
  return page('Plugin Directory', nonce, body, { mode: 'directory', plugins });
}

export function errorPage(title: string, message: string, nonce: string): string {
  return page(title, nonce, `<p id="error">${escapeHtml(message)}</p><p><a href="/plugins">Open the Plugin Directory</a></p>`);
}

const APP_STYLE = `
*{box-sizing:border-box} body{font-family:system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f7f9}
header{display:flex;justify-content:space-between;align-items:center;padding:.6rem 1.25rem;background:#1d2433;color:#fff}
header a,header .link{color:#fff;text-decoration:none;margin-left:1rem;background:none;border:0;font:inherit;cursor:pointer} .brand{font-weight:700;margin:0}
main{max-width:60rem;margin:1.25rem auto;padding:0 1rem} .card{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:1rem 1.25rem;margin-bottom:1rem}
h2{font-size:1.2rem;margin:.2rem 0 .8rem} label{display:block;font-weight:600;margin:.6rem 0 .25rem}
input,textarea{width:100%;padding:.45rem;border:1px solid #b8bfc9;border-radius:4px;font:inherit} .row{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
button{margin-top:.75rem;padding:.45rem .9rem;border-radius:4px;border:1px solid #2d5bd7;background:#2d5bd7;color:#fff;font:inherit;cursor:pointer}
button:disabled{opacity:.5;cursor:default} button.danger{background:#fff;color:#b00020;border-color:#b00020} .actions button{margin-right:.5rem}
.field-error{color:#b00020;margin:.3rem 0 0} [aria-invalid=true]{border-color:#b00020} .visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)} #search{margin-bottom:.5rem} .muted{color:#666} .signin{max-width:26rem;margin:3rem auto}
table{width:100%;border-collapse:collapse} th,td{text-align:left;padding:.4rem;border-bottom:1px solid #eceff3}
.badge{display:inline-block;padding:0 .45rem;border-radius:9px;background:#e8ebf0;font-size:.85em} .s-running{background:#d7f3df} .s-error{background:#fbd9de} .s-paused{background:#fff0c7}
#transcript{list-style:none;padding:0} .ev{border-left:3px solid #c8ced8;padding:.35rem .75rem;margin:.5rem 0;background:#fafbfc}
.ev.role-user{border-color:#2d5bd7} .ev.role-assistant{border-color:#0a7a2f} .ev.action{border-color:#8a5cd1} .ev.observation{border-color:#8a8f99} .ev.error{border-color:#b00020}
.who{font-size:.8em;font-weight:600;color:#555} .text{white-space:pre-wrap} pre{white-space:pre-wrap;word-break:break-word;max-height:20rem;overflow:auto;background:#f0f2f5;padding:.5rem;margin:.3rem 0}
`;

// Settings, Settings > Skills and the admin console (src/facade/web/app/settings.tsx, skills.tsx, admin.tsx).
const APP_STYLE_SETTINGS = `
select{width:100%;padding:.45rem;border:1px solid #b8bfc9;border-radius:4px;font:inherit;background:#fff} h3{font-size:1rem;margin:1rem 0 .3rem}
.tabs{display:flex;gap:.25rem;margin-bottom:.75rem} .tabs a{padding:.35rem .8rem;border-radius:4px 4px 0 0;color:#2d5bd7;text-decoration:none;border-bottom:2px solid transparent} .tabs a[aria-current=page]{border-color:#2d5bd7;font-weight:600;color:#1d1d1f}
button.secondary{background:#fff;color:#2d5bd7} .link-button{background:none;border:0;color:#2d5bd7;padding:0;margin:.3rem 0 0} label.inline{display:inline-flex;gap:.4rem;align-items:center;font-weight:400} label.inline input{width:auto}
.saved{color:#0a7a2f;margin-left:.5rem} .notice{background:#eef6ee;border:1px solid #9fd3a8;border-radius:6px;padding:.5rem .8rem;margin-bottom:.75rem} .row3{display:grid;grid-template-columns:1fr 1fr 1fr;gap:1rem}
.small{font-size:.85em} td.actions{white-space:nowrap} td.actions input{width:12rem;display:inline-block} .page-title{font-size:1.4rem;margin:.2rem 0 .8rem} ul.plugins{margin:.3rem 0;padding-left:1.2rem}
`;

/** The web app's shell: the bundle (GET /app.js) renders everything into #app. */
export function appPage(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>agentyard</title><style nonce="${nonce}">${APP_STYLE}${APP_STYLE_SETTINGS}</style></head>
<body><div id="app"><noscript>The agentyard web app needs JavaScript.</noscript></div>
<script type="module" nonce="${nonce}" src="/app.js"></script>
</body></html>`;
}
