// A SandboxRuntime for reconciler tests: records calls and plays states chosen by the test.
import type { Sandbox } from '../../api/sandbox.ts';
import type { RuntimeState, SandboxRuntime } from '../../runtime/types.ts';

export class FakeRuntime implements SandboxRuntime {
  readonly calls: string[] = [];
  readonly states = new Map<string, RuntimeState>();
  /** What a start leads to; tests flip it to 'running' to finish booting. */
  startResult: (name: string) => RuntimeState = (name) => ({ phase: 'starting', runtimeId: name });

  async observe(sb: Sandbox): Promise<RuntimeState> {
    return this.states.get(sb.metadata.name) ?? { phase: 'absent' };
  }
  async start(sb: Sandbox, opts: { sessionKey: string }): Promise<RuntimeState> {
    if (!opts.sessionKey) throw new Error('no session key');
    this.calls.push(`start ${sb.metadata.name}`);
    const state = this.startResult(sb.metadata.name);
    this.states.set(sb.metadata.name, state);
    return state;
  }
  /** Recognisably derived, so tests see the hand-over send the sealing key of the new session key. */
  secretKeyFor(sessionKey: string): string {
    return `sealed:${sessionKey}`;
  }
  async pause(sb: Sandbox): Promise<RuntimeState> {
    const state: RuntimeState = { phase: 'paused', runtimeId: sb.metadata.name };
    if (this.states.get(sb.metadata.name)?.phase !== 'paused') this.calls.push(`pause ${sb.metadata.name}`);
    this.states.set(sb.metadata.name, state);
    return state;
  }
  async delete(sb: Sandbox): Promise<void> {
    this.calls.push(`delete ${sb.metadata.name}`);
    this.states.delete(sb.metadata.name);
  }
  /** Marks a sandbox's agent server as up. */
  boot(name: string, url = `http://127.0.0.1:1/${name}`): void {
    this.states.set(name, { phase: 'running', runtimeId: name, url });
  }
  #deaths = 0;
  /** Its agent server dies and stays dead until start() (a process runtime). */
  die(name: string, reason = 'AgentServerExited'): void {
    this.states.set(name, { phase: 'exited', runtimeId: name, death: { id: `death ${++this.#deaths}`, reason, message: `killed (${reason})` } });
  }
  /** Its agent server dies and the runtime restarts it by itself (a kubelet); reported on the running state. */
  dieAndHeal(name: string, url = `http://127.0.0.1:1/${name}`): void {
    this.states.set(name, { phase: 'running', runtimeId: name, url, death: { id: `death ${++this.#deaths}`, reason: 'Error', message: 'container ended' } });
  }
}
