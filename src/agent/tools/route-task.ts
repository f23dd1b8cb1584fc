// route_task_to_model (OpenHands 1.58's ClassifyAndSwitchLLMTool): the model asks for the task to be
// routed; a classifier (the meta-profile's `classifier_model`, an LLM profile) reads the recent
// messages and picks one of the meta-profile's classes (or, with a `prompt_template`, names an LLM
// profile outright), and the conversation switches to that class's LLM profile as switch_profile
// does: the next model call goes to it. Every miss is an error observation the model can act on
// (OpenHands refuses to fall back to a default model silently). The classifier's usage is its own
// bucket, `classifier:<profile>`, counted against the run's budget.
//
// The agent server gives the tool its stores (AgentHost.routing). The meta-profile is read by name
// at each call (so an edit after the launch applies, as in OpenHands); the copy the launch carried
// in the tool's params serves when the name no longer resolves. LLM profiles are read at each call
// too: a launch carries none of their keys in the conversation. The tool's inline LLMs (1.58's
// `meta_profile_llms`) come through the same ModelRouting: the agent server puts them first
// (ConversationRuntime.routing), their keys sealed with the conversation's secrets.
import type { Event } from '../../api/events/index.ts';
import type { ClassifyAndSwitchLLMAction, ClassifyAndSwitchLLMObservation } from '../../api/events/index.ts';
import type { MetaProfile } from '../../api/agent-server/meta-profiles.ts';
import { AgentyardError } from '../../api/errors.ts';
import type { ChatMessage } from '../llm/client.ts';
import { ModelCallError } from '../llm/errors.ts';
import { CLASSIFIER_USAGE_PREFIX } from '../model-calls.ts';
import type { LlmConfig, ModelRouting } from '../types.ts';
import { textContent, ToolArgumentError, type AgentTool } from './tool.ts';

export const ROUTE_TOOL_NAME = 'route_task_to_model';
/** How a start request's `agent.tools` names it (OpenHands' registered name: the class name). */
export const ROUTE_TOOL_KIND = 'ClassifyAndSwitchLLMTool';
/** The classifier sees this many of the latest messages (OpenHands' limit). */
const RECENT_MESSAGES = 6;
const CLASSIFIER_ROLE = 'You are a model-routing classifier.';

export interface RouteToolParams {
  /** The meta-profile to route with (the agent profile's `meta_profile_ref`); none: the first stored one. */
  active_meta_profile?: string | null;
  /** The meta-profile as the launch resolved it: used when the name no longer resolves. */
  meta_profile?: MetaProfile | null;
}

/** The routing tool's spec in `agent.tools`, when the request has one. */
export function routeToolSpec(tools: readonly { name: string; params?: Record<string, unknown> }[] | undefined): RouteToolParams | undefined {
  const spec = tools?.find((t) => t.name === ROUTE_TOOL_KIND || t.name === ROUTE_TOOL_NAME);
  return spec ? ((spec.params ?? {}) as RouteToolParams) : undefined;
}

export interface RouteToolDeps {
  params: RouteToolParams;
  routing: () => ModelRouting | undefined;
  events: () => readonly Event[];
  /** One classifier call, its usage under `usageId` (ModelCalls.classify). */
  classify(llm: LlmConfig, usageId: string, messages: ChatMessage[], signal: AbortSignal): Promise<string>;
}

type Observation = ClassifyAndSwitchLLMObservation;

function failed(text: string, extra: { model?: string; chosen_class?: string } = {}): Observation {
  return { kind: 'ClassifyAndSwitchLLMObservation', content: textContent(text), is_error: true, chosen_class: extra.chosen_class ?? null, model: extra.model ?? null, active_model: null };
}

/** The numbered classes and the answer asked for (a number, 0 for none). */
function classPrompt(meta: MetaProfile): string {
  const classes = (meta.classes ?? []).map((c, i) => `${i + 1}. ${c.description}`);
  return [CLASSIFIER_ROLE, '', 'Pick the one category below that best describes the current task, judging by the recent conversation.', '', 'Categories:', ...classes, '', 'Answer with the number of that category and nothing else; answer 0 when none clearly fits.'].join('\n');
}

/** The meta-profile's own template with its two placeholders filled. */
function directPrompt(meta: MetaProfile, transcript: string): string {
  const values: Record<string, string> = { instance_text: transcript, model_table: meta.model_table ?? '' };
  return (meta.prompt_template ?? '').replace(/{{\s*(instance_text|model_table)\s*}}/g, (_m, key: string) => values[key]!).trim();
}

/** System then user, never a system turn alone (some providers refuse a request without a user turn). */
export function classifierMessages(meta: MetaProfile, transcript: string): ChatMessage[] {
  if (meta.prompt_template == null) return [{ role: 'system', content: classPrompt(meta) }, { role: 'user', content: `Recent conversation:\n${transcript}\n\nCategory number:` }];
  return [{ role: 'system', content: CLASSIFIER_ROLE }, { role: 'user', content: directPrompt(meta, transcript) }];
}

/** The first integer of the answer when it numbers a class; 0 otherwise. */
export function classIndex(reply: string, count: number): number {
  const m = /-?\d+/.exec(reply);
  const n = m ? Number(m[0]) : 0;
  return n >= 1 && n <= count ? n : 0;
}

/** A direct-routing answer: the JSON's `model`, else a profile name found in the text (longest first); case-insensitive, returned as stored. */
export function directModel(reply: string, names: readonly string[]): string | undefined {
  const raw = reply.trim().replace(/^```[a-zA-Z]*\n?/, '').replace(/\n?```$/, '').trim();
  const byFold = new Map(names.map((n) => [n.toLowerCase(), n]));
  let candidate = '';
  const json = /\{.*\}/s.exec(raw);
  if (json) {
    try {
      const parsed = JSON.parse(json[0]) as { model?: unknown };
      candidate = String(parsed.model ?? '').trim();
    } catch {
      candidate = '';
    }
  }
  if (candidate) return byFold.get(candidate.toLowerCase());
  const folded = raw.toLowerCase();
  return [...names].sort((a, b) => b.length - a.length).find((n) => folded.includes(n.toLowerCase()));
}

/** "source: text" for the last user and assistant messages (tool calls and outputs say little about the task). */
function transcriptOf(events: readonly Event[]): string {
  const lines: string[] = [];
  for (const e of events) {
    if (e.kind !== 'MessageEvent') continue;
    const text = (e.llm_message.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n').trim();
    if (text) lines.push(`${e.source}: ${text}`);
  }
  return lines.slice(-RECENT_MESSAGES).join('\n');
}

const reason = (err: unknown) => (err instanceof ModelCallError ? `${err.code}: ${err.message}` : err instanceof Error ? `${err.name}: ${err.message}` : String(err));

export function routeTaskTool(d: RouteToolDeps): AgentTool<ClassifyAndSwitchLLMAction> {
  const resolveMeta = (routing: ModelRouting): MetaProfile | string => {
    const name = d.params.active_meta_profile;
    const stored = name ? routing.metaProfile(name) : undefined;
    if (stored) return stored;
    if (d.params.meta_profile) return d.params.meta_profile;
    const names = routing.metaProfileNames();
    if (name) return `Active meta-profile '${name}' could not be resolved from the store or inline configuration. Available meta-profiles: ${names.join(', ') || 'none'}`;
    const first = names[0] !== undefined ? routing.metaProfile(names[0]) : undefined;
    return first ?? 'No meta-profile is active and none are available in the meta-profile store.';
  };

  return {
    name: ROUTE_TOOL_NAME,
    definitionKind: ROUTE_TOOL_KIND,
    actionKind: 'ClassifyAndSwitchLLMAction',
    observationKind: 'ClassifyAndSwitchLLMObservation',
    description:
      'Route the current task to the best-suited model: a classifier reads the recent conversation, picks a task category of the active ' +
      "meta-profile, and this conversation switches to that category's saved LLM profile.\n\n" +
      'Call it near the start of a task, or when the task changes. The switch applies from the next model call on.',
    parameters: { type: 'object', properties: {} },
    // As OpenHands' Action: no fields, and none other accepted.
    toAction(args) {
      const extra = Object.keys(args);
      if (extra.length) throw new ToolArgumentError(`unexpected argument(s): ${extra.join(', ')} (this tool takes none)`);
      return { kind: 'ClassifyAndSwitchLLMAction' };
    },
    async execute(_action, ctx): Promise<Observation> {
      const routing = d.routing();
      if (!routing) return failed('Cannot classify and switch LLM: this conversation has no model routing.');
      const meta = resolveMeta(routing);
      if (typeof meta === 'string') return failed(`Failed to resolve the active meta-profile: ${meta}`);

      // 1) The classifier: an LLM profile, its calls counted in their own usage bucket.
      const usageId = `${CLASSIFIER_USAGE_PREFIX}${meta.classifier_model}`;
      let classifier: LlmConfig | undefined;
      try {
        classifier = routing.llmProfile(meta.classifier_model);
      } catch (err) {
        return failed(`Failed to load classifier profile '${meta.classifier_model}': ${ctx.mask(err instanceof AgentyardError ? err.message : reason(err))}`);
      }
      if (!classifier) return failed(`Failed to load classifier profile '${meta.classifier_model}': LLM profile '${meta.classifier_model}' not found`);

      // 2) One classifier call over the recent messages. Its key is not the conversation's (which the
      // agent masks): a provider echoing it in an error or a reply must not put it in an event.
      const key = classifier.apiKey;
      const hide = (t: string) => ctx.mask(key ? t.split(key).join('**********') : t);
      let reply: string;
      try {
        reply = hide(await d.classify(classifier, usageId, classifierMessages(meta, transcriptOf(d.events()) || '(no messages yet)'), ctx.signal ?? new AbortController().signal));
      } catch (err) {
        return failed(`Classifier call failed: ${hide(reason(err))}`);
      }

      // 3) The target: the class it numbered, or the profile it named. No silent default.
      let target: string;
      let chosenClass: string;
      if (meta.prompt_template == null) {
        const classes = meta.classes ?? [];
        const index = classIndex(reply, classes.length);
        if (index === 0) return failed(`The classifier picked no valid category (reply: ${JSON.stringify(reply)}); no default model is used instead. Call the tool again, or fix the meta-profile's classes.`);
        target = classes[index - 1]!.model;
        chosenClass = classes[index - 1]!.description;
      } else {
        const named = directModel(reply, routing.llmProfileNames());
        if (named === undefined) return failed(`The classifier's reply names no saved LLM profile (reply: ${JSON.stringify(reply)}); no default model is used instead. Call the tool again, or extend the model table.`);
        target = named;
        chosenClass = `model: ${target}`;
      }

      // 4) The switch, as switch_profile makes it.
      let activeModel: string | undefined;
      try {
        activeModel = routing.switchProfile(target);
      } catch (err) {
        return failed(`Failed to switch to LLM profile '${target}': ${ctx.mask(err instanceof AgentyardError ? err.message : reason(err))}`, { model: target, chosen_class: chosenClass });
      }
      if (activeModel === undefined) return failed(`Target LLM profile '${target}' was not found.`, { model: target, chosen_class: chosenClass });
      return {
        kind: 'ClassifyAndSwitchLLMObservation',
        content: textContent(`Classified the task as '${chosenClass}' and switched to LLM profile '${target}' (model '${activeModel}'). The next agent steps use this profile.`),
        is_error: false,
        chosen_class: chosenClass,
        model: target,
        active_model: activeModel,
      };
    },
  };
}
