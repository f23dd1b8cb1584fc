// Meta-profiles, as OpenHands 1.58's meta_profiles_router.py serves them: saved, listed, read and
// deleted, stored in the agent server's database. Activation records the name as the settings
// document's `active_meta_profile` (as PATCH /api/settings does); the `default` agent profile seeded
// afterwards turns the model-routing tool (route_task_to_model) on with it, as OpenHands seeds it
// from its agent settings (store/agent-profile-store.ts). Deleting the active one clears the pointer.
import Router from '@koa/router';
import type { Context } from 'koa';
import { MAX_META_PROFILES, MetaProfile } from '../../api/agent-server/meta-profiles.ts';
import { ProfileName } from '../../api/agent-server/profiles.ts';
import { parseValue } from '../../api/events/validate.ts';
import { Conflict, Invalid, NotFound } from '../../api/errors.ts';
import type { Db } from '../store/db.ts';
import type { SettingsDocStore } from '../store/settings-store.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS meta_profiles (
  name    TEXT PRIMARY KEY,
  profile TEXT NOT NULL
) STRICT;
`;

const nameOf = (ctx: Context) => parseValue(ProfileName, ctx.params['name'], { prefix: ['path', 'name'] });
const valueError = (msg: string) => new Invalid([{ loc: ['body'], msg: `Value error, ${msg}`, type: 'value_error' }]);

/** MetaProfile's own rules and the save route's: a route to take, and a template that can be filled. */
function checkRouting(p: MetaProfile): void {
  if (p.prompt_template != null) {
    if (!/{{\s*instance_text\s*}}/.test(p.prompt_template)) throw valueError('Direct-routing meta-profiles must include {{ instance_text }} in prompt_template.');
    if (p.classes?.length) throw valueError('Direct-routing meta-profiles cannot also define classes.');
  } else if (!p.classes?.length) {
    throw valueError('A meta-profile needs either classes or a prompt_template to route.');
  }
}

/** A stored meta-profile (an agent profile's launch resolves its `meta_profile_ref` with it). */
export function readMetaProfile(db: Db, name: string): MetaProfile | undefined {
  db.exec(DDL);
  const r = db.prepare('SELECT profile FROM meta_profiles WHERE name = ?').get(name) as { profile: string } | undefined;
  return r && (JSON.parse(r.profile) as MetaProfile);
}

/** The stored meta-profiles' names, sorted (the routing tool's fallback when none is named). */
export function metaProfileNames(db: Db): string[] {
  db.exec(DDL);
  return (db.prepare('SELECT name FROM meta_profiles ORDER BY name').all() as { name: string }[]).map((r) => r.name);
}

export function metaProfileRoutes(db: Db, settings: SettingsDocStore): Router {
  db.exec(DDL);
  const get = (name: string) => readMetaProfile(db, name);
  const router = new Router({ prefix: '/meta-profiles' });

  router.get('/', async (ctx) => {
    const rows = db.prepare('SELECT name, profile FROM meta_profiles ORDER BY name').all() as { name: string; profile: string }[];
    ctx.body = {
      meta_profiles: rows.map((r) => {
        const p = JSON.parse(r.profile) as MetaProfile;
        return { name: r.name, classifier_model: p.classifier_model, num_classes: p.classes?.length ?? 0 };
      }),
      active_meta_profile: settings.activeMetaProfile(),
    };
  });

  router.get('/:name', async (ctx) => {
    const name = nameOf(ctx);
    const config = get(name);
    if (!config) throw new NotFound(`Meta-profile '${name}' not found`);
    ctx.body = { name, config };
  });

  router.post('/:name', async (ctx) => {
    const name = nameOf(ctx);
    const p = parseValue(MetaProfile, ctx.request.body ?? {}, { prefix: ['body'], clean: true });
    checkRouting(p);
    const config: MetaProfile = { classifier_model: p.classifier_model, classes: p.classes ?? [], prompt_template: p.prompt_template ?? null, model_table: p.model_table ?? null };
    db.transaction(() => {
      const { n } = db.prepare('SELECT count(*) AS n FROM meta_profiles').get() as { n: number };
      if (!get(name) && n >= MAX_META_PROFILES) throw new Conflict(`Meta-profile limit reached (${MAX_META_PROFILES}). Delete a meta-profile before saving a new one.`);
      db.prepare('INSERT INTO meta_profiles (name, profile) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET profile = excluded.profile').run(name, JSON.stringify(config));
    })();
    ctx.status = 201;
    ctx.body = { name, message: `Meta-profile '${name}' saved` };
  });

  router.delete('/:name', async (ctx) => {
    const name = nameOf(ctx);
    db.transaction(() => {
      db.prepare('DELETE FROM meta_profiles WHERE name = ?').run(name);
      // No pointer left on a meta-profile that is gone (OpenHands' _set_active_meta_profile_if_matches).
      if (settings.activeMetaProfile() === name) settings.update((doc) => void (doc.active_meta_profile = null));
    })();
    ctx.body = { name, message: `Meta-profile '${name}' deleted` };
  });

  router.post('/:name/activate', async (ctx) => {
    const name = nameOf(ctx);
    settings.update((doc) => {
      if (!get(name)) throw new NotFound(`Meta-profile '${name}' not found`);
      doc.active_meta_profile = name;
    });
    ctx.body = { name, message: `Meta-profile '${name}' activated`, applied: true };
  });

  return router;
}
