// The view: what the model reads of a conversation once every Condensation is applied (OpenHands
// `context/view/view.py`). Events are walked in order; a Condensation removes its forgotten events
// and puts a synthetic CondensationSummaryEvent at `summary_offset`; a CondensationRequest stays
// unhandled until a later Condensation. State updates, errors, pauses and the like are not in it.
import type { Event } from '../../api/events/index.ts';

export interface View {
  events: Event[];
  /** A CondensationRequest (POST /condense, or a context-window error) that no Condensation followed. */
  unhandledRequest: boolean;
}

export const IN_VIEW = new Set<Event['kind']>(['SystemPromptEvent', 'MessageEvent', 'ActionEvent', 'ObservationEvent', 'AgentErrorEvent', 'UserRejectObservation', 'CondensationSummaryEvent']);

export function buildView(all: readonly Event[]): View {
  let events: Event[] = [];
  let unhandledRequest = false;
  for (const e of all) {
    if (e.kind === 'Condensation') {
      const forgotten = new Set(e.forgotten_event_ids ?? []);
      events = events.filter((v) => !forgotten.has(v.id));
      if (e.summary != null && e.summary_offset != null) {
        const summary: Event = { id: `${e.id}-summary`, timestamp: e.timestamp, source: e.source, summary: e.summary, kind: 'CondensationSummaryEvent' };
        events.splice(Math.min(e.summary_offset, events.length), 0, summary);
      }
      unhandledRequest = false;
    } else if (e.kind === 'CondensationRequest') {
      unhandledRequest = true;
    } else if (IN_VIEW.has(e.kind)) {
      events.push(e);
    }
  }
  return { events, unhandledRequest };
}
