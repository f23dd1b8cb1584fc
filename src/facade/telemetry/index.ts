// Trace export for the facade: telemetryFromEnv() (undefined when tracing is off) and the watcher
// that turns start tasks into traces.
import { ConversationKind, type Conversation } from '../../api/conversation.ts';
import type { FacadeDeps } from '../deps.ts';
import { watchLoop } from '../watch-loop.ts';
import type { Telemetry } from './provider.ts';
import { StartTraces } from './start-traces.ts';

export { telemetryFromEnv, tracingEnabled, type Telemetry } from './provider.ts';

export interface StartTracing {
  close(): Promise<void>;
}

/**
 * Watches Conversations and exports their start tasks as traces until close(). Exactly one process
 * of an installation should run it: `agentyard up` (in its API server), or the leading controller
 * in a cluster (API replicas may be several).
 */
export function traceStartTasks(d: Pick<FacadeDeps, 'store' | 'namespace' | 'log'>, telemetry: Telemetry): StartTracing {
  const traces = new StartTraces(telemetry);
  const abort = new AbortController();
  const loop = watchLoop<Conversation>(d, ConversationKind, {
    signal: abort.signal,
    onList: (items) => items.forEach((c) => traces.observe(c)),
    onEvent: (ev) => {
      if (ev.type === 'DELETED') traces.deleted(ev.object);
      else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') traces.observe(ev.object);
    },
  });
  return {
    close: async () => {
      abort.abort();
      await loop;
      traces.close();
      await telemetry.flush();
    },
  };
}
