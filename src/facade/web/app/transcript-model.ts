// What the transcript shows, built incrementally from events as they arrive: one row per message,
// tool call (with its observation, rejection or error attached once it comes), state change or
// error. Rows are kept in fixed-size blocks; a change replaces only the block it is in, so the view
// re-renders that block and skips the others (memo by identity) — an append at 10,000 events costs
// one block, not the whole transcript.
import type { AgentEvent } from './api.ts';

export const BLOCK_ROWS = 50;

export type Row =
  | { type: 'message'; e: AgentEvent }
  | { type: 'tool'; e: AgentEvent; result?: AgentEvent }
  | { type: 'state'; e: AgentEvent }
  | { type: 'error'; e: AgentEvent }
  | { type: 'analysis'; e: AgentEvent; verdicts: Verdict[] }
  | { type: 'other'; e: AgentEvent };

/** One action's verdict in a SecurityAnalysisEvent, with what the row shows of the action it judges. */
export interface Verdict {
  actionId: string;
  risk: string;
  /** The judged action's tool and summary; absent when the action is not in the transcript. */
  tool?: string;
  summary?: string;
  details?: string;
}

/**
 * A SecurityAnalysisEvent's verdicts in its `risks` order (the batch's), each with the tool and
 * summary of the action it judges (the ActionEvents are recorded before their analysis).
 */
export function verdictsOf(e: AgentEvent, actions: ReadonlyMap<string, AgentEvent>): Verdict[] {
  const risks = (e['risks'] ?? {}) as Record<string, unknown>;
  const details = (e['details'] ?? {}) as Record<string, unknown>;
  return Object.entries(risks).map(([actionId, risk]) => {
    const a = actions.get(actionId);
    const d = details[actionId];
    return {
      actionId,
      risk: String(risk),
      ...(a ? { tool: String(a['tool_name']) } : {}),
      ...(a && typeof a['summary'] === 'string' ? { summary: a['summary'] } : {}),
      ...(d != null ? { details: typeof d === 'string' ? d : JSON.stringify(d) } : {}),
    };
  });
}

/**
 * Events that are not shown: the system prompt, token ids, model logs, snapshots, and the answer's
 * streamed pieces (the whole answer follows as its MessageEvent or ActionEvent).
 */
const HIDDEN = new Set(['SystemPromptEvent', 'TokenEvent', 'LLMCompletionLogEvent', 'ConversationStateUpdateEvent', 'CondensationRequest', 'StreamingDeltaEvent']);
/** Kinds that answer a tool call (matched by tool_call_id). */
const RESULTS = new Set(['ObservationEvent', 'UserRejectObservation', 'AgentErrorEvent']);

export class TranscriptModel {
  readonly blocks: Row[][] = [];
  /** Latest execution status seen in the events (full_state snapshots included). */
  executionStatus: string | undefined;
  /** The agent server's ConversationInfo from the last full_state snapshot (working dir, policy). */
  info: Record<string, unknown> | undefined;
  #rows = 0;
  readonly #toolRow = new Map<string, number>();
  /** ActionEvents by id, for the verdicts of a SecurityAnalysisEvent. */
  readonly #actions = new Map<string, AgentEvent>();
  /** A result that came before its call (never in order from one server; kept to be safe). */
  readonly #orphans = new Map<string, AgentEvent>();

  get rowCount(): number {
    return this.#rows;
  }

  /** Adds events in arrival order; true when something shown changed. */
  add(events: readonly AgentEvent[]): boolean {
    let changed = false;
    for (const e of events) changed = this.#one(e) || changed;
    return changed;
  }

  /** Tool calls with no result yet: what a confirmation would accept or reject. */
  pendingActions(): AgentEvent[] {
    const out: AgentEvent[] = [];
    for (const [, i] of this.#toolRow) {
      const row = this.#row(i);
      if (row.type === 'tool' && !row.result) out.push(row.e);
    }
    return out;
  }

  #one(e: AgentEvent): boolean {
    if (e.kind === 'ConversationStateUpdateEvent') {
      const key = e['key'];
      const value = e['value'] as Record<string, unknown> | string | undefined;
      if (key === 'execution_status' && typeof value === 'string') {
        this.executionStatus = value;
        this.#push({ type: 'state', e });
        return true;
      }
      if (key === 'full_state' && value && typeof value === 'object' && typeof value['execution_status'] === 'string') {
        this.executionStatus = value['execution_status'];
        this.info = value;
        return true;
      }
      return false;
    }
    if (HIDDEN.has(e.kind)) return false;
    const call = typeof e['tool_call_id'] === 'string' ? e['tool_call_id'] : undefined;
    if (RESULTS.has(e.kind) && call !== undefined) {
      const i = this.#toolRow.get(call);
      if (i === undefined) {
        // An error with no call it answers is shown on its own.
        if (e.kind === 'AgentErrorEvent') this.#push({ type: 'error', e });
        else this.#orphans.set(call, e);
        return e.kind === 'AgentErrorEvent';
      }
      const row = this.#row(i);
      this.#replace(i, { ...(row as Extract<Row, { type: 'tool' }>), result: e });
      return true;
    }
    switch (e.kind) {
      case 'MessageEvent':
        this.#push({ type: 'message', e });
        return true;
      case 'ActionEvent': {
        this.#actions.set(e.id, e);
        const orphan = call !== undefined ? this.#orphans.get(call) : undefined;
        if (call !== undefined) {
          this.#orphans.delete(call);
          this.#toolRow.set(call, this.#rows);
        }
        this.#push(orphan ? { type: 'tool', e, result: orphan } : { type: 'tool', e });
        return true;
      }
      case 'ConversationErrorEvent':
      case 'AgentErrorEvent':
        this.#push({ type: 'error', e });
        return true;
      case 'SecurityAnalysisEvent':
        this.#push({ type: 'analysis', e, verdicts: verdictsOf(e, this.#actions) });
        return true;
      case 'PauseEvent':
      case 'InterruptEvent':
        this.#push({ type: 'state', e });
        return true;
      default:
        this.#push({ type: 'other', e });
        return true;
    }
  }

  #row(i: number): Row {
    return this.blocks[Math.floor(i / BLOCK_ROWS)]![i % BLOCK_ROWS]!;
  }

  #push(row: Row): void {
    const b = Math.floor(this.#rows / BLOCK_ROWS);
    this.blocks[b] = b < this.blocks.length ? [...this.blocks[b]!, row] : [row];
    this.#rows++;
  }

  #replace(i: number, row: Row): void {
    const b = Math.floor(i / BLOCK_ROWS);
    const block = [...this.blocks[b]!];
    block[i % BLOCK_ROWS] = row;
    this.blocks[b] = block;
  }
}
