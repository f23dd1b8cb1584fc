// The instance plugin catalog: plugins an administrator offers in the Plugin Directory
// ({app_url}/plugins). Read once at startup from the file AGENTYARD_PLUGIN_CATALOG names (YAML or
// JSON): `plugins: [{name, description?, source, ref?, repo_path?, parameters?}]`. It holds no
// secrets (the directory shows it to anyone who opens the page).
import { readFileSync } from 'node:fs';
import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse as parseYaml } from 'yaml';
import { PluginSpec } from '../../api/conversation.ts';

export const CatalogPlugin = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    ...PluginSpec.properties,
  },
  { additionalProperties: false },
);
export type CatalogPlugin = Static<typeof CatalogPlugin>;

export const PluginCatalog = Type.Object({ plugins: Type.Array(CatalogPlugin) }, { additionalProperties: false });
export type PluginCatalog = Static<typeof PluginCatalog>;

export function parsePluginCatalog(text: string, origin: string): CatalogPlugin[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`${origin}: not YAML or JSON (${(err as Error).message})`);
  }
  if (!Value.Check(PluginCatalog, doc)) {
    const e = [...Value.Errors(PluginCatalog, doc)][0];
    throw new Error(`${origin}: ${e?.instancePath || '/'} ${e?.message ?? 'is not a plugin catalog'}; expected plugins: [{name, source, ref?, repo_path?, description?, parameters?}]`);
  }
  const names = new Set<string>();
  for (const p of doc.plugins) {
    if (names.has(p.name)) throw new Error(`${origin}: plugin name "${p.name}" appears twice`);
    names.add(p.name);
  }
  return doc.plugins;
}

/** The catalog AGENTYARD_PLUGIN_CATALOG names, or an empty one. */
export function loadPluginCatalog(env: NodeJS.ProcessEnv): CatalogPlugin[] {
  const file = env.AGENTYARD_PLUGIN_CATALOG;
  if (!file) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`AGENTYARD_PLUGIN_CATALOG: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parsePluginCatalog(text, `AGENTYARD_PLUGIN_CATALOG ${file}`);
}
