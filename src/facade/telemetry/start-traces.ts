// Start tasks as OpenTelemetry traces. One trace per conversation:
//   conversation                      root; conversation id, sandbox id, user, tags, metadata
//   └─ <observability_span_name>      when the start request named one
//      └─ start_task.<STEP>           one span per start-task step the service went through
// Built from what the controller writes (status.startTask and its updatedAt), watched from the
// store, so the controller needs no tracing code and the facade traces in both deployment modes.
//
// The ids are derived from the conversation: trace id = the conversation id (32 hex), root and
// named span ids = hashes of it. A process killed mid-start leaves its ended step spans pointing at
// a root it never exported; the process that resumes the start recreates the same root (start time
// = the conversation's creation) and exports it, so the trace stays whole across restarts.
// Only request fields chosen for tracing become attributes: never secrets or message text.
import { createHash } from 'node:crypto';
import { ROOT_CONTEXT, SpanStatusCode, trace, type AttributeValue, type Context, type Span } from '@opentelemetry/api';
import type { Conversation } from '../../api/conversation.ts';
import { LABEL_START_TASK } from '../../api/meta.ts';
import type { Telemetry } from './provider.ts';

export const ROOT_SPAN_NAME = 'conversation';
export const STEP_SPAN_PREFIX = 'start_task.';

export const ATTR = {
  conversationId: 'gen_ai.conversation.id',
  startTaskId: 'agentyard.start_task.id',
  sandboxId: 'agentyard.sandbox.id',
  user: 'user.id',
  tags: 'agentyard.tags',
  metadataPrefix: 'agentyard.metadata.',
  step: 'agentyard.start_task.status',
} as const;

interface Open {
  root: Span;
  named?: Span;
  parent: Context;
  step?: { name: string; span: Span };
  sandbox?: string;
}

function hex(input: string, chars: number): string {
  return createHash('sha256').update(input).digest('hex').slice(0, chars);
}

export function traceIdOf(conversationId: string): string {
  return /^[0-9a-f]{32}$/.test(conversationId) && !/^0+$/.test(conversationId) ? conversationId : hex(`trace:${conversationId}`, 32);
}

export function rootSpanIdOf(conversationId: string): string {
  return hex(`conversation:${conversationId}`, 16);
}

function namedSpanIdOf(conversationId: string): string {
  return hex(`named:${conversationId}`, 16);
}

function timeOf(iso: string | undefined, fallback: number): number {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : fallback;
}

function rootAttributes(conv: Conversation): Record<string, AttributeValue> {
  const attrs: Record<string, AttributeValue> = { [ATTR.conversationId]: conv.metadata.name };
  const task = conv.metadata.labels?.[LABEL_START_TASK];
  if (task) attrs[ATTR.startTaskId] = task;
  if (conv.spec.owner) attrs[ATTR.user] = conv.spec.owner;
  const obs = conv.spec.observability;
  if (obs?.tags && obs.tags.length > 0) attrs[ATTR.tags] = obs.tags;
  for (const [key, value] of Object.entries(obs?.metadata ?? {})) attrs[ATTR.metadataPrefix + key] = value;
  return attrs;
}

export class StartTraces {
  readonly #t: Telemetry;
  readonly #open = new Map<string, Open>();

  constructor(telemetry: Telemetry) {
    this.#t = telemetry;
  }

  /** Conversations whose start is being traced (for tests and shutdown). */
  get openCount(): number {
    return this.#open.size;
  }

  /** Called with every version of every Conversation seen; idempotent. */
  observe(conv: Conversation): void {
    const id = conv.metadata.name;
    if (conv.metadata.deletionTimestamp) return this.deleted(conv);
    const task = conv.status?.startTask;
    const step = task?.status ?? 'WORKING';
    const at = timeOf(task?.updatedAt, Date.now());
    let open = this.#open.get(id);
    if (!open) {
      // A start that ended before we saw it was traced by whoever saw it end (or by nobody).
      if (step === 'READY' || step === 'ERROR') return;
      open = this.#begin(conv);
      this.#open.set(id, open);
    }
    const sandbox = conv.status?.sandboxName;
    if (sandbox && open.sandbox !== sandbox) {
      open.sandbox = sandbox;
      open.root.setAttribute(ATTR.sandboxId, sandbox);
    }
    if (open.step?.name === step) return;
    open.step?.span.end(at);
    open.step = undefined;
    if (step === 'READY' || step === 'ERROR') {
      this.#finish(id, open, at, step === 'ERROR' ? (task?.detail ?? 'The start failed') : undefined);
      return;
    }
    const span = this.#t.tracer.startSpan(STEP_SPAN_PREFIX + step, { startTime: at, attributes: { [ATTR.step]: step } }, open.parent);
    open.step = { name: step, span };
  }

  /** A conversation deleted mid-start: its trace ends there, as an error. */
  deleted(conv: Conversation): void {
    const open = this.#open.get(conv.metadata.name);
    if (!open) return;
    const at = Date.now();
    open.step?.span.end(at);
    this.#finish(conv.metadata.name, open, at, 'The conversation was deleted before its start completed');
  }

  /** Drops open traces without exporting them (the next process to see the start completes them). */
  close(): void {
    this.#open.clear();
  }

  #begin(conv: Conversation): Open {
    const id = conv.metadata.name;
    const startTime = timeOf(conv.metadata.creationTimestamp, Date.now());
    const root = this.#t.withIds({ traceId: traceIdOf(id), spanId: rootSpanIdOf(id) }, () =>
      this.#t.tracer.startSpan(ROOT_SPAN_NAME, { root: true, startTime, attributes: rootAttributes(conv) }, ROOT_CONTEXT),
    );
    const rootContext = trace.setSpan(ROOT_CONTEXT, root);
    const name = conv.spec.observability?.spanName;
    if (!name) return { root, parent: rootContext };
    const named = this.#t.withIds({ spanId: namedSpanIdOf(id) }, () =>
      this.#t.tracer.startSpan(name, { startTime, attributes: { [ATTR.conversationId]: id } }, rootContext),
    );
    return { root, named, parent: trace.setSpan(ROOT_CONTEXT, named) };
  }

  #finish(id: string, open: Open, at: number, error: string | undefined): void {
    for (const span of [open.named, open.root]) {
      if (!span) continue;
      span.setStatus(error ? { code: SpanStatusCode.ERROR, message: error } : { code: SpanStatusCode.OK });
      span.end(at);
    }
    this.#open.delete(id);
  }
}
