// /api/plugins (OpenHands 1.58 plugins_router.py): POST /api/plugins, the plugins a workspace has
// locally (user and project plugin directories, and the enabled installed plugins); the installed
// plugins (`~/.openhands/plugins/installed`, see routes/installed.ts), with the skills and files
// each brings; and POST /api/plugins/fetch, a plugin source checked and pinned without installing.
// The extensions repository's plugin marketplace is another router's.
import Router from '@koa/router';
import { inWorkspace } from '../http/paths.ts';
import { PluginsRequest, type PluginsResponse } from '../../api/agent-server/plugins.ts';
import { FetchPluginRequest, InstallPluginRequest, PluginName, type FetchPluginRequest as FetchRequest, type InstalledPlugin } from '../../api/agent-server/installs.ts';
import { availablePlugins, installedPluginMeta, loadPluginDir, pluginInfo } from '../../agent/plugins/index.ts';
import { fetchPluginStrict } from '../../agent/plugins/strict-fetch.ts';
import { ExtensionStore } from '../../agent/extensions/install.ts';
import { installedDir, persistenceDir, type InstalledRecord } from '../../agent/extensions/installed.ts';
import { validate } from '../http/validate.ts';
import { installedRoutes } from './installed.ts';

/** InstalledPluginResponse: the record (without requested_ref) and what the installed copy brings; null when it no longer loads. */
export function installedPluginView(r: InstalledRecord): InstalledPlugin {
  let contents: Pick<InstalledPlugin, 'skills' | 'files'> = { skills: null, files: null };
  try {
    const info = pluginInfo(loadPluginDir(r.install_path));
    contents = { skills: info.skills, files: info.files };
  } catch {
    // A broken installed copy must not break the listing (OpenHands).
  }
  return { name: r.name, version: r.version, description: r.description, enabled: r.enabled, source: r.source, resolved_ref: r.resolved_ref, repo_path: r.repo_path, installed_at: r.installed_at, install_path: r.install_path, ...contents };
}

/** `workspaceDir`: a relative project_dir (or local source) is taken inside it; `home`: where user and installed plugins live (tests). */
export function pluginRoutes(workspaceDir: string, opts: { home?: string } = {}): Router {
  const router = new Router();
  router.post('/plugins', validate({ body: PluginsRequest }), async (ctx) => {
    const req = ctx.state['body'] as PluginsRequest;
    const projectDir = req.project_dir ? inWorkspace(workspaceDir, req.project_dir) : null;
    const plugins = availablePlugins({ loadUser: req.load_user !== false, loadProject: req.load_project !== false, projectDir, ...(opts.home ? { home: opts.home } : {}) });
    const body: PluginsResponse = { plugins: plugins.map(pluginInfo) };
    ctx.body = body;
  });
  router.post('/plugins/fetch', validate({ body: FetchPluginRequest }), async (ctx) => {
    const req = ctx.state['body'] as FetchRequest;
    ctx.body = await fetchPluginStrict(req, { cacheDir: `${persistenceDir(opts.home)}/cache/plugins`, baseDir: workspaceDir });
  });
  const stores = new Map<string, ExtensionStore>();
  const store = () => {
    const dir = installedDir('plugins', opts.home);
    let s = stores.get(dir);
    if (!s) stores.set(dir, (s = new ExtensionStore(dir, installedPluginMeta, { what: 'plugin', workspaceDir })));
    return s;
  };
  installedRoutes(router, { kind: 'plugins', what: 'plugin', param: 'plugin_name', name: PluginName, installRequest: InstallPluginRequest, store, view: installedPluginView, invalid: 'Invalid plugin. Ensure it has a valid kebab-case name.' });
  return router;
}
