// Status truth: a conversation never reads `running` when no agent server is running it. The agent
// server owns execution_status while it serves (it reports it through the event sink); once its
// sandbox stops serving, the run it was doing is gone, and this says what the status becomes.
import type { Conversation, ExecutionStatus } from '../../api/conversation.ts';
import type { Sandbox } from '../../api/sandbox.ts';

export interface Interruption {
  status: Extract<ExecutionStatus, 'paused' | 'error'>;
  why: string;
}

/**
 * For a `running` conversation whose sandbox is not serving: `paused` (resumable) when the sandbox
 * was paused, `error` (the run was lost) when it failed, is gone, or its agent server died and is
 * being restarted (the restarted agent server says the same, with a ConversationErrorEvent). None
 * while the sandbox runs: its agent server reports the status itself.
 */
export function interruption(conv: Conversation, sb: Sandbox | undefined): Interruption | undefined {
  if (conv.status?.executionStatus !== 'running') return undefined;
  const name = conv.status.sandboxName ?? 'its sandbox';
  if (!sb || sb.metadata.deletionTimestamp || sb.status?.phase === 'MISSING') {
    return { status: 'error', why: `Sandbox ${name} was deleted while the agent was running` };
  }
  const phase = sb.status?.phase;
  if (phase === 'ERROR') return { status: 'error', why: `Sandbox ${name} failed while the agent was running: ${sb.status?.message ?? 'unknown error'}` };
  if (phase === 'PAUSED' || sb.spec.paused) return { status: 'paused', why: `Sandbox ${name} was paused (${sb.status?.pauseReason ?? 'UserRequest'}) while the agent was running` };
  if (phase === 'STARTING') {
    const death = sb.status?.lastDeath;
    return { status: 'error', why: `The agent server of sandbox ${name} stopped while the agent was running${death ? ` (${death.reason})` : ''}; the run was lost` };
  }
  return undefined;
}
