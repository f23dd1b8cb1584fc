// The hooks of one conversation at work: which hooks an agent moment triggers, running them in
// order (stopping at the first block, as OpenHands does), and recording each run as a
// HookExecutionEvent. The agent decides what a block means at each moment.
import type { HookConfig, HookDefinition } from '../../api/agent-server/hooks.ts';
import type { ActionEvent, Event, HookEventType, ObservationEvent } from '../../api/events/index.ts';
import { newEventBase } from '../../api/events/index.ts';
import type { Rejection } from '../gate.ts';
import type { AgentHost } from '../types.ts';
import { hooksFor } from './config.ts';
import { hookEnv, runCommandHook, type HookEventInput, type HookResult } from './executor.ts';

type Of<K extends Event['kind']> = Extract<Event, { kind: K }>;

/** OpenHands caps each text of a HookExecutionEvent at this many characters. */
const MAX_LOG_CHARS = 50_000;
const TRUNCATED = '\n... [truncated]';
export const STOP_FEEDBACK_PREFIX = '[Stop hook feedback]';

function cap(text: string): string;
function cap(text: string | null): string | null;
function cap(text: string | null): string | null {
  if (text === null || text.length <= MAX_LOG_CHARS) return text;
  return text.slice(0, MAX_LOG_CHARS - TRUNCATED.length) + TRUNCATED;
}

/** What the hooks of one moment decided. */
export interface HookOutcome {
  blocked: boolean;
  /** The first blocking hook's reason, else its stderr; null when nothing blocked or it gave none. */
  reason: string | null;
  /** The additionalContext of every hook that gave one, joined by newlines. */
  additionalContext: string | null;
}

const NOTHING: HookOutcome = { blocked: false, reason: null, additionalContext: null };

/** Display label of a hook in events, as OpenHands' `display_command`. */
function label(h: HookDefinition): string {
  if (h.command) return h.command;
  const prefix = `${h.type ?? 'command'}-hook`;
  if (h.name != null) return `${prefix}:${h.name}`;
  const text = h.type === 'prompt' ? h.prompt : h.system_prompt;
  return text ? `${prefix}:${text.slice(0, 20)}` : `${prefix}:${h.type}`;
}

interface Moment {
  event: HookEventType;
  toolName: string | null;
  input: Omit<HookEventInput, 'event_type' | 'tool_name' | 'session_id' | 'working_dir'>;
  hookInput: Record<string, unknown> | null;
  actionId?: string;
  messageId?: string;
}

export class HookRunner {
  readonly config: HookConfig;
  readonly #host: AgentHost;
  readonly #emit: (event: Event) => void;

  constructor(config: HookConfig, host: AgentHost, emit: (event: Event) => void) {
    this.config = config;
    this.#host = host;
    this.#emit = emit;
  }

  has(event: HookEventType, toolName: string | null = null): boolean {
    return hooksFor(this.config, event, toolName).length > 0;
  }

  /** The first gate: actions a PreToolUse hook blocks are answered by UserRejectObservation (rejection_source `hook`). */
  /**
   * PreToolUse for one action, run before its ActionEvent is recorded (1.58 runs them in the
   * ActionEvent's callback, so each HookExecutionEvent precedes its action). A block: the rejection.
   */
  async preToolUse(a: ActionEvent): Promise<Rejection | undefined> {
    const toolInput = (a.action ?? {}) as Record<string, unknown>;
    const o = await this.#run({
      event: 'PreToolUse',
      toolName: a.tool_name,
      input: { tool_input: toolInput, tool_response: null, message: null, metadata: {} },
      hookInput: { tool_name: a.tool_name, tool_input: toolInput },
      actionId: a.id,
    });
    return o.blocked ? { reason: o.reason ?? 'Blocked by hook', source: 'hook' } : undefined;
  }

  /** After a tool's observation is recorded. A block here changes nothing (the tool already ran); it is recorded. */
  async postToolUse(action: ActionEvent, observation: ObservationEvent): Promise<void> {
    const toolInput = (action.action ?? {}) as Record<string, unknown>;
    const toolResponse = observation.observation as unknown as Record<string, unknown>;
    await this.#run({
      event: 'PostToolUse',
      toolName: action.tool_name,
      input: { tool_input: toolInput, tool_response: toolResponse, message: null, metadata: {} },
      hookInput: { tool_name: action.tool_name, tool_input: toolInput, tool_response: toolResponse },
      actionId: action.id,
    });
  }

  /** A user message before the model sees it: a block keeps it from the model; context is added. */
  userPromptSubmit(message: Of<'MessageEvent'>): Promise<HookOutcome> {
    const text = (message.llm_message.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');
    return this.#run({ event: 'UserPromptSubmit', toolName: null, input: { tool_input: null, tool_response: null, message: text, metadata: {} }, hookInput: { message: text }, messageId: message.id });
  }

  sessionStart(): Promise<HookOutcome> {
    return this.#run({ event: 'SessionStart', toolName: null, input: { tool_input: null, tool_response: null, message: null, metadata: {} }, hookInput: null });
  }

  sessionEnd(): Promise<HookOutcome> {
    return this.#run({ event: 'SessionEnd', toolName: null, input: { tool_input: null, tool_response: null, message: null, metadata: {} }, hookInput: null });
  }

  /**
   * The agent is about to finish. `stop: false` when a hook denies it; the feedback (the hooks'
   * additional context, else the blocking reason) goes back to the model.
   */
  async stop(reason = 'agent_finished'): Promise<{ stop: boolean; feedback: string | null }> {
    const o = await this.#run({ event: 'Stop', toolName: null, input: { tool_input: null, tool_response: null, message: null, metadata: { reason } }, hookInput: { reason } });
    if (!o.blocked) return { stop: true, feedback: null };
    return { stop: false, feedback: o.additionalContext ?? o.reason };
  }

  /** Ids of user messages a UserPromptSubmit hook blocked (read back from the recorded events). */
  blockedMessages(events: readonly Event[]): Set<string> {
    const ids = new Set<string>();
    for (const e of events) if (e.kind === 'HookExecutionEvent' && e.hook_event_type === 'UserPromptSubmit' && e.blocked && e.message_id) ids.add(e.message_id);
    return ids;
  }

  /** Ids of user messages UserPromptSubmit hooks already saw. */
  submittedMessages(events: readonly Event[]): Set<string> {
    const ids = new Set<string>();
    for (const e of events) if (e.kind === 'HookExecutionEvent' && e.hook_event_type === 'UserPromptSubmit' && e.message_id) ids.add(e.message_id);
    return ids;
  }

  async #run(m: Moment): Promise<HookOutcome> {
    const hooks = hooksFor(this.config, m.event, m.toolName);
    if (hooks.length === 0) return NOTHING;
    const host = this.#host;
    const input: HookEventInput = { event_type: m.event, tool_name: m.toolName, session_id: host.conversationId, working_dir: host.workspaceDir, ...m.input };
    const env = hookEnv(input, host.workspaceDir, host.secrets);
    const contexts: string[] = [];
    for (const hook of hooks) {
      const result: HookResult =
        (hook.type ?? 'command') === 'command'
          ? await runCommandHook(hook, input, { cwd: host.workspaceDir, env })
          : // Prompt and agent hooks need an LLM evaluation agentyard does not do yet; OpenHands fails open.
            { success: false, blocked: false, exit_code: 0, stdout: '', stderr: '', decision: 'allow', reason: null, additional_context: null, error: `${hook.type} hooks are not supported by agentyard yet; allowed without evaluation` };
      this.#record(m, label(hook), result);
      if (result.additional_context) contexts.push(result.additional_context);
      if (result.blocked) {
        return { blocked: true, reason: result.reason ?? (result.stderr.trim() || null), additionalContext: contexts.join('\n') || null };
      }
    }
    return { blocked: false, reason: null, additionalContext: contexts.join('\n') || null };
  }

  #record(m: Moment, command: string, r: HookResult): void {
    // The agent's emit masks secrets in every string, stdout and stderr included.
    this.#emit({
      ...newEventBase('hook'),
      hook_event_type: m.event,
      hook_command: command,
      tool_name: m.toolName,
      success: r.success,
      blocked: r.blocked,
      exit_code: r.exit_code,
      stdout: cap(r.stdout),
      stderr: cap(r.stderr),
      reason: cap(r.reason),
      additional_context: cap(r.additional_context),
      error: cap(r.error),
      action_id: m.actionId ?? null,
      message_id: m.messageId ?? null,
      hook_input: m.hookInput,
      kind: 'HookExecutionEvent',
    });
  }
}
