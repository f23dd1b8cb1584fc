// GET /api/v1/config/models/search and /config/providers/search: the model this installation
// gives agents (LLM_MODEL, through the model gateway) and its provider. A conversation may name
// another model with llm_model; the gateway sends it to the same endpoint with the same key, so
// which others work is the provider's to say, and this lists only the configured one.
import type { ListQuery } from '../api/app/compat.ts';
import type { FacadeDeps } from './deps.ts';
import { pageOf, type Page } from './paging.ts';

/** litellm style: `anthropic/claude-…` → anthropic; no prefix → openai (the agent's own rule). */
export function providerOf(model: string): string {
  const slash = model.indexOf('/');
  return slash > 0 ? model.slice(0, slash) : 'openai';
}

function page<T>(items: { id: string; item: T }[], q: ListQuery): Page<T> {
  const wanted = q.query?.toLowerCase();
  const rows = items.filter((i) => wanted === undefined || i.id.toLowerCase().includes(wanted)).map((i) => ({ key: i.id, name: i.id, item: i.item }));
  return pageOf(rows, { pageId: q.page_id, limit: q.limit ?? 100, descending: false });
}

export function searchModels(d: FacadeDeps, q: ListQuery): Page<{ id: string; provider: string; is_default: boolean }> {
  const model = d.modelUpstream?.model;
  return page(model ? [{ id: model, item: { id: model, provider: providerOf(model), is_default: true } }] : [], q);
}

export function searchProviders(d: FacadeDeps, q: ListQuery): Page<{ id: string; models: string[] }> {
  const model = d.modelUpstream?.model;
  return page(model ? [{ id: providerOf(model), item: { id: providerOf(model), models: [model] } }] : [], q);
}
