// The LLM listings OpenHands' agent server serves under /api/llm, from the file generated out of the
// OpenHands release this server is compatible with (hack/gen-llm-catalog.py; catalog.test.ts checks
// it is current). Read once, on first use: 180 KB a server that never lists models need not parse.
import { readFileSync } from 'node:fs';

interface Catalog {
  providers: string[];
  /** Every model (sorted, unique) with the provider OpenHands' filter extracts from it ("" for none). */
  models: Record<string, string>;
  verified: Record<string, string[]>;
  subscription_models: { openai: string[] };
}

let loaded: Catalog | undefined;
export function catalog(): Catalog {
  loaded ??= JSON.parse(readFileSync(new URL('./catalog.gen.json', import.meta.url), 'utf8')) as Catalog;
  return loaded;
}

/**
 * The models of `provider` (all of them without one), as OpenHands filters: a model whose extracted
 * provider is `provider`, or one of the provider's verified models, unless that model is namespaced
 * and extracts to another provider (an OpenRouter id such as `deepseek/deepseek-chat`).
 */
export function modelsOf(provider: string | undefined): string[] {
  const { models, verified } = catalog();
  const all = Object.keys(models);
  if (provider === undefined) return all;
  const verifiedHere = new Set(Object.hasOwn(verified, provider) ? verified[provider] : []);
  return all.filter((m) => {
    const extracted = models[m]!;
    return extracted === provider || (verifiedHere.has(m) && !(m.includes('/') && extracted !== '' && extracted !== provider));
  });
}
