// ConversationInfo.activated_knowledge_skills and invoked_skills, kept from the events: names in
// user MessageEvents' activated_skills, skills loaded by a successful invoke_skill, and the path rules
// fired (the agent's `activated_path_rules` state updates). Built once
// from the stored events (only the few rows that can matter are parsed), then updated per event.
import type { Event } from '../../api/events/index.ts';
import type { EventStore } from '../store/event-store.ts';

export class SkillState {
  readonly activated: string[] = [];
  readonly invoked: string[] = [];
  /** Path rules fired (OpenHands' activated_path_rules): the last `activated_path_rules` state update's names. */
  pathRules: string[] = [];

  static load(store: EventStore, conversationId: string): SkillState {
    const state = new SkillState();
    for (const kind of ['MessageEvent', 'ObservationEvent', 'ConversationStateUpdateEvent']) {
      let fromSeq: number | undefined;
      for (;;) {
        const page = store.search(conversationId, { kind, limit: 500, ...(fromSeq !== undefined ? { fromSeq } : {}) });
        for (const row of page.items) {
          if (row.json.includes('"activated_skills":["') || row.json.includes('"InvokeSkillObservation"') || row.json.includes('"activated_path_rules"')) state.add(JSON.parse(row.json) as Event);
        }
        if (page.nextSeq === null) break;
        fromSeq = page.nextSeq;
      }
    }
    return state;
  }

  add(e: Event): void {
    if (e.kind === 'ConversationStateUpdateEvent') {
      if (e.key === 'activated_path_rules' && Array.isArray(e.value)) this.pathRules = e.value.filter((n): n is string => typeof n === 'string');
    } else if (e.kind === 'MessageEvent') {
      for (const n of e.activated_skills ?? []) if (!this.activated.includes(n)) this.activated.push(n);
    } else if (e.kind === 'ObservationEvent' && e.observation.kind === 'InvokeSkillObservation' && !e.observation.is_error) {
      const n = e.observation.skill_name;
      if (!this.invoked.includes(n)) this.invoked.push(n);
    }
  }
}
