// The install routes OpenHands 1.58 has for skills and for plugins (skills_router.py and
// plugins_router.py, the same shape twice): POST /install, GET /installed, GET, PATCH (enable or
// disable) and DELETE /installed/{name}, POST /installed/{name}/refresh. Their answers and status
// codes are OpenHands' (sentences included); a 422 for an invalid source is located at
// body.source, as every other 422 of both servers, with what is wrong with it.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { TSchema } from 'typebox';
import { BadRequest, Conflict, Invalid, NotFound } from '../../api/errors.ts';
import { parseValue } from '../../api/events/validate.ts';
import { UpdateInstalledStateRequest, type UpdateInstalledStateRequest as StateRequest } from '../../api/agent-server/installs.ts';
import { ExtensionExistsError, ExtensionFetchError, ExtensionInvalidError, type ExtensionStore, type InstallRequest } from '../../agent/extensions/install.ts';
import type { InstalledRecord } from '../../agent/extensions/installed.ts';
import { validate } from '../http/validate.ts';

export interface InstalledRoutesSpec<V> {
  /** `skills` or `plugins`: the routes are under `/<kind>`. */
  kind: 'skills' | 'plugins';
  /** `skill` or `plugin`, in sentences. */
  what: 'skill' | 'plugin';
  /** The path parameter: `skill_name` or `plugin_name`. */
  param: string;
  name: TSchema;
  installRequest: TSchema;
  /** The store, looked up at each request (its directory follows the server's home). */
  store: () => ExtensionStore;
  /** The answer for one installed extension. */
  view: (r: InstalledRecord) => V;
  /** The 422 sentence of an invalid source (OpenHands'). */
  invalid: string;
}

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

export function installedRoutes<V>(r: Router, spec: InstalledRoutesSpec<V>): void {
  const { kind, what, param } = spec;
  const What = cap(what);
  const nameOf = (ctx: Context): string => parseValue(spec.name, ctx.params[param], { prefix: ['path', param] }) as string;
  const notInstalled = (name: string) => new NotFound(`${What} '${name}' is not installed`);

  r.post(`/${kind}/install`, validate({ body: spec.installRequest }), async (ctx) => {
    const req = ctx.state['body'] as InstallRequest;
    try {
      ctx.body = spec.view(await spec.store().install(req));
    } catch (err) {
      if (err instanceof ExtensionExistsError) throw new Conflict(`${What} already installed. Use force=true to overwrite.`);
      // OpenHands hides why; the reason (git's message without credentials, or the missing path) is added.
      if (err instanceof ExtensionFetchError) throw new BadRequest(`Failed to fetch ${what} source. Check that the source is valid. ${err.message}`);
      if (err instanceof ExtensionInvalidError) throw new Invalid([{ loc: ['body', 'source'], msg: `${spec.invalid} ${err.message}`, type: 'value_error' }]);
      throw err;
    }
  });

  r.get(`/${kind}/installed`, async (ctx) => {
    ctx.body = { [kind]: spec.store().list().map(spec.view) };
  });

  r.get(`/${kind}/installed/:${param}`, async (ctx) => {
    const name = nameOf(ctx);
    const rec = spec.store().get(name);
    if (!rec) throw notInstalled(name);
    ctx.body = spec.view(rec);
  });

  r.patch(`/${kind}/installed/:${param}`, async (ctx, next) => {
    // The name is checked before the body (FastAPI reports both; the name alone is what matters here).
    nameOf(ctx);
    await next();
  }, validate({ body: UpdateInstalledStateRequest }), async (ctx) => {
    const name = nameOf(ctx);
    const { enabled } = ctx.state['body'] as StateRequest;
    if (!(await spec.store().setEnabled(name, enabled))) throw notInstalled(name);
    ctx.body = { name, enabled };
  });

  r.delete(`/${kind}/installed/:${param}`, async (ctx) => {
    const name = nameOf(ctx);
    if (!(await spec.store().uninstall(name))) throw notInstalled(name);
    ctx.body = { message: `${What} '${name}' uninstalled` };
  });

  r.post(`/${kind}/installed/:${param}/refresh`, async (ctx) => {
    const name = nameOf(ctx);
    let rec: InstalledRecord | undefined;
    try {
      rec = await spec.store().update(name);
    } catch (err) {
      if (err instanceof ExtensionFetchError) throw new BadRequest(`Failed to fetch the source of ${what} '${name}'. The installed copy was kept. ${err.message}`);
      if (err instanceof ExtensionInvalidError) throw new Invalid([{ loc: ['path', param], msg: `The source of ${what} '${name}' no longer holds a valid ${what}. The installed copy was kept. ${err.message}`, type: 'value_error' }]);
      throw err;
    }
    if (!rec) throw notInstalled(name);
    ctx.body = { message: `${What} '${name}' updated`, [what]: spec.view(rec) };
  });
}
