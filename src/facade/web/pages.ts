// The web app's one HTML page. The Plugin Directory and launch links are pages of the app: the
// server hands their data (the catalog, a parsed link, or what is wrong with it) to the app in a
// JSON block that is never executed and whose "<" are escaped, so nothing from a link can close a tag.
import type { PluginSpec } from '../../api/conversation.ts';
import type { CatalogPlugin } from './catalog.ts';
/** For the few server-rendered error pages (login's). */
export function escapeHtml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
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
.ev.role-user{border-color:#2d5bd7} .ev.role-assistant{border-color:#0a7a2f} .ev.action{border-color:#8a5cd1} .ev.analysis{border-color:#c77c02} .verdicts{list-style:none;padding:0;margin:.3rem 0 0} .risk-high{background:#fbd9de} .risk-medium{background:#fff0c7} .risk-low{background:#d7f3df} .ev.observation{border-color:#8a8f99} .ev.error{border-color:#b00020}
.who{font-size:.8em;font-weight:600;color:#555} .text{white-space:pre-wrap} pre{white-space:pre-wrap;word-break:break-word;max-height:20rem;overflow:auto;background:#f0f2f5;padding:.5rem;margin:.3rem 0}
.block{list-style:none;padding:0;margin:0;content-visibility:auto;contain-intrinsic-size:auto 3000px} .result{margin:.4rem 0 .1rem;padding-left:.6rem;border-left:2px solid #8a8f99} .result.error,.result.rejected{border-color:#b00020}
.thinking summary{color:#666;font-size:.85em;cursor:pointer} .pending{border-style:dashed} .confirm{border:2px solid #c77d00;background:#fff8e8;border-radius:6px;padding:.5rem 1rem;margin:.75rem 0} .confirm h3{margin:.2rem 0}
.tabs{margin:.75rem 0 .25rem;border-bottom:1px solid #dde1e7} .tabs button{background:#fff;color:#1d2433;border-color:#dde1e7;border-bottom:0;border-radius:4px 4px 0 0;margin:0 .25rem 0 0} .tabs [aria-selected=true]{background:#1d2433;color:#fff}
.link{background:none;border:0;color:#2d5bd7;padding:0;margin:0;text-decoration:underline} .inline{display:inline;font-weight:400} .inline select{margin-left:.25rem} .rename input{width:auto;min-width:20rem}
.paths{list-style:none;padding:0;max-height:22rem;overflow:auto;font-family:ui-monospace,monospace;font-size:.9em} .paths li{margin:.15rem 0} .git-added{background:#d7f3df} .git-deleted{background:#fbd9de} .git-updated,.git-moved{background:#fff0c7}
.diff .add{background:#e6ffec;display:block} .diff .del{background:#ffebe9;display:block} .diff .same{display:block;color:#555} .earlier{text-align:center} fieldset{border:1px solid #dde1e7;border-radius:6px;margin:.75rem 0} .kv{display:grid;grid-template-columns:1fr 1fr auto;gap:.5rem;align-items:end}
`;

// Settings, Settings > Skills, the admin console, the Plugin Directory and launch links (src/facade/web/app/settings.tsx, skills.tsx, admin.tsx, plugins.tsx).
const APP_STYLE_SETTINGS = `
select{width:100%;padding:.45rem;border:1px solid #b8bfc9;border-radius:4px;font:inherit;background:#fff} h3{font-size:1rem;margin:1rem 0 .3rem}
.tabs{display:flex;gap:.25rem;margin-bottom:.75rem} .tabs a{padding:.35rem .8rem;border-radius:4px 4px 0 0;color:#2d5bd7;text-decoration:none;border-bottom:2px solid transparent} .tabs a[aria-current=page]{border-color:#2d5bd7;font-weight:600;color:#1d1d1f}
button.secondary{background:#fff;color:#2d5bd7} .link-button{background:none;border:0;color:#2d5bd7;padding:0;margin:.3rem 0 0} label.inline{display:inline-flex;gap:.4rem;align-items:center;font-weight:400} label.inline input{width:auto}
.saved{color:#0a7a2f;margin-left:.5rem} .notice{background:#eef6ee;border:1px solid #9fd3a8;border-radius:6px;padding:.5rem .8rem;margin-bottom:.75rem} .row3{display:grid;grid-template-columns:1fr 1fr 1fr;gap:1rem}
.small{font-size:.85em} section.plugin dl{display:grid;grid-template-columns:8rem 1fr;gap:.25rem .75rem} dt{font-weight:600} dd{margin:0;font-family:monospace;word-break:break-all}
.warning{background:#fff4e5;border-left:4px solid #f0a020;padding:.5rem .75rem} #status[data-kind=error]{color:#b00020} #status[data-kind=done]{color:#0a7a2f} ul.catalog{list-style:none;padding:0} ul.catalog li{margin:.5rem 0} fieldset{border:1px solid #dde1e7;border-radius:6px} td.actions{white-space:nowrap} td.actions input{width:12rem;display:inline-block} .page-title{font-size:1.4rem;margin:.2rem 0 .8rem} ul.plugins{margin:.3rem 0;padding-left:1.2rem}
`;

/** The data /plugins and /launch hand to the app (src/facade/web/app/plugins.tsx, PageData). */
export type PageData =
  | { page: 'plugins'; plugins: CatalogPlugin[] }
  | { page: 'launch'; plugins: PluginSpec[]; message: string }
  | { page: 'launch-error'; title: string; message: string };

/** The web app's shell: the bundle (GET /app.js) renders everything into #app. */
export function appPage(nonce: string, data?: PageData): string {
  const json = data === undefined ? '' : `<script type="application/json" id="page-data">${JSON.stringify(data).replaceAll('<', '\\u003c')}</script>\n`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>agentyard</title><style nonce="${nonce}">${APP_STYLE}${APP_STYLE_SETTINGS}</style></head>
<body><div id="app"><noscript>The agentyard web app needs JavaScript.</noscript></div>
${json}<script type="module" nonce="${nonce}" src="/app.js"></script>
</body></html>`;
}
