// ConversationReconciler: drives the start task (the Conversation's status.startTask) through
// WORKING → WAITING_FOR_SANDBOX → PREPARING_REPOSITORY → RUNNING_SETUP_SCRIPT → SETTING_UP_GIT_HOOKS
// → SETTING_UP_SKILLS → STARTING_CONVERSATION → READY, or ERROR. One step per pass, each idempotent,
// so a restarted controller resumes a half-done start. The facade owns status.executionStatus and
// status.metrics (it hears them from the agent servers); this reconciler touches the status only
// when the sandbox stops serving a `running` conversation (execution-truth.ts): nobody else could.
import { isDeepStrictEqual } from 'node:util';
import { ConditionType, Reason } from '../../api/conditions.ts';
import { ConversationKind, START_TASK_STEPS, type Conversation, type ConversationStatus, type StartTaskStatus } from '../../api/conversation.ts';
import { Conflict, isAgentyardError } from '../../api/errors.ts';
import { ANNOTATION_CREATED_AT, API_VERSION, LABEL_AGENT_CONVERSATION, LABEL_OWNER, LABEL_SANDBOX } from '../../api/meta.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import type { LlmConfig } from '../../agent/types.ts';
import { AgentServerClient } from '../../runtime/agent-server-client.ts';
import type { ResourceStore } from '../../store/types.ts';
import type { Logger } from '../../util/log.ts';
import type { Clock } from '../clock.ts';
import type { EventRecorder } from '../events.ts';
import { setCondition } from '../conditions.ts';
import { splitKey } from '../keys.ts';
import type { LifecycleSettings } from '../lifecycle.ts';
import type { Result } from '../queue.ts';
import { readSessionKey } from '../sandbox/session-secret.ts';
import { chooseSandbox, holdsCapacity } from './placement.ts';
import { autoLoadPlugins } from './marketplaces.ts';
import { orgConfigSkills } from './org-config.ts';
import { cloneFailure, cloneInSandbox, cloneRequest, DEFAULT_GIT_SETTINGS, type GitSettings } from './repository.ts';
import { agentConversationId, agentServerStartRequest, readConversationSecrets } from './start-request.ts';
import { interruption } from './execution-truth.ts';
import type { SkillsResponse } from '../../api/agent-server/skills.ts';
import { installGitHooks, PRE_COMMIT_SCRIPT, runSetupScript, SETUP_SCRIPT, SETUP_SCRIPT_TIMEOUT_S } from './workspace-setup.ts';
import { sandboxSkillNames } from './org-config.ts';
import { agentServerDialUrl } from '../../runtime/dial.ts';
import type { SandboxRuntime } from '../../runtime/types.ts';
import { LABEL_CLAIMED_FROM } from '../../api/warm-pool.ts';
import { claimMember, earlierClaim } from '../warm-pool/claim.ts';
import { handOver } from '../warm-pool/hand-over.ts';
import { isUnclaimedMember } from '../warm-pool/members.ts';
import type { WarmPoolMetrics } from '../warm-pool/metrics.ts';

const WAIT_FOR_SANDBOX_MS = 1_000;
/** Starts whose `.openhands` listing waits for their Git-hook step; more are between the two steps only in a flood. */
const MAX_HELD_LISTINGS = 1_000;
/** The loaded skills are kept in the Conversation's status; well under the 1.5 MiB an object may have in etcd. */
const MAX_START_SKILLS_BYTES = 512 * 1024;

function skillsDetail(loaded: NonNullable<ConversationStatus['startSkills']>): string {
  const skills = loaded.names.length ? `Skills: ${loaded.names.join(', ')}` : 'No skills';
  const plugins = loaded.plugins.length ? `; plugins to load at start: ${loaded.plugins.map((p) => p.source).join(', ')}` : '';
  return `${skills}${plugins}`;
}

export interface ConversationReconcilerDeps {
  store: ResourceStore;
  recorder?: EventRecorder;
  clock: Clock;
  settings: LifecycleSettings;
  llm?: LlmConfig;
  log?: Logger;
  /** Git hosts per provider and configuration repository naming (default: the public hosts). */
  git?: GitSettings;
  /** How the runtime derives an agent server's sealing key (the hand-over of a claimed warm-pool sandbox). */
  runtime?: Pick<SandboxRuntime, 'secretKeyFor'>;
  /** Warm-pool hits and misses. */
  warmPools?: WarmPoolMetrics;
}

class StartFailure extends Error {
  readonly reason: string;
  constructor(reason: string, detail: string) {
    super(detail);
    this.reason = reason;
  }
}

export class ConversationReconciler {
  readonly #d: ConversationReconcilerDeps;
  /** Placements run one at a time, so two concurrent starts cannot both take the last slot. */
  #placing: Promise<unknown> = Promise.resolve();
  /**
   * The `.openhands` names the setup-script step read, by conversation uid, for its Git-hook step
   * (the next pass) when the script did not run: one call to the agent server less per start
   * (issue #16). In memory only: a restarted controller, or a start that failed in between, lists again.
   */
  readonly #listings = new Map<string, string[]>();

  constructor(deps: ConversationReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(key: string): Promise<Result> {
    const { namespace, name } = splitKey(key);
    const conv = await this.#d.store.get(ConversationKind, namespace, name);
    if (!conv || conv.metadata.deletionTimestamp) return {};
    const step = conv.status?.startTask?.status ?? 'WORKING';
    if (step === 'READY') return this.#followSandbox(conv);
    if (step === 'ERROR') return {};

    const status: ConversationStatus = structuredClone(conv.status ?? {});
    let result: Result = {};
    // The object the status goes onto: the placement's label write makes a new resourceVersion.
    let current = conv;
    try {
      const next = await this.#advance(conv, step, status);
      if (next.latest) current = next.latest;
      if (next.requeueAfterMs !== undefined) result = { requeueAfterMs: next.requeueAfterMs };
      if (next.step) this.#setStep(status, next.step, conv, next.detail);
    } catch (err) {
      if (!(err instanceof StartFailure)) throw err; // transient: retried with backoff
      this.#setStep(status, 'ERROR', conv, err.message, err.reason);
    }
    if (!status.startTask) this.#setStep(status, 'WORKING', conv);
    if (!isDeepStrictEqual(status, conv.status)) {
      await this.#writeStatus(current, status);
      const now = status.startTask?.status;
      if (now !== step || !conv.status?.startTask) this.#recordStep(conv, status);
    }
    return result;
  }

  /** A `running` conversation whose sandbox stopped serving it: paused or error, with the reason as an event. */
  async #followSandbox(conv: Conversation): Promise<Result> {
    if (conv.status?.executionStatus !== 'running') return {};
    const namespace = conv.metadata.namespace ?? 'default';
    const sb = conv.status.sandboxName ? await this.#d.store.get(SandboxKind, namespace, conv.status.sandboxName) : undefined;
    const change = interruption(conv, sb);
    if (!change) return {};
    for (let attempt = 0, latest: Conversation | undefined = conv; latest; attempt++) {
      // Only over `running`: the agent server may have said something newer meanwhile.
      if (latest.status?.executionStatus !== 'running') return {};
      try {
        await this.#d.store.updateStatus(ConversationKind, { ...latest, status: { ...latest.status, executionStatus: change.status } });
        break;
      } catch (err) {
        if (!(err instanceof Conflict) || attempt >= 5) throw err;
        latest = await this.#d.store.get(ConversationKind, namespace, conv.metadata.name);
      }
    }
    this.#d.log?.info({ conversation: conv.metadata.name, executionStatus: change.status, why: change.why }, 'run interrupted');
    this.#d.recorder?.record(conv, 'Warning', Reason.RunInterrupted, change.why);
    return {};
  }

  #recordStep(conv: Conversation, status: ConversationStatus): void {
    const task = status.startTask;
    if (!this.#d.recorder || !task) return;
    if (task.status === 'ERROR') this.#d.recorder.record(conv, 'Warning', Reason.StartFailed, task.detail ?? 'The start failed');
    else if (task.status === 'WAITING_FOR_SANDBOX') this.#d.recorder.record(conv, 'Normal', Reason.Placed, `Placed on sandbox ${status.sandboxName}`);
    else if (task.status === 'READY') this.#d.recorder.record(conv, 'Normal', Reason.Ready, 'The conversation runs on its agent server');
  }

  /** `latest`: the conversation as this pass last wrote it (its status is written onto that, not a Conflict). */
  async #advance(conv: Conversation, step: StartTaskStatus, status: ConversationStatus): Promise<{ step?: StartTaskStatus; detail?: string; requeueAfterMs?: number; latest?: Conversation }> {
    if (!status.sandboxName) {
      const placed = await this.#serialised(() => this.#place(conv));
      status.sandboxName = placed.name;
      return { step: 'WAITING_FOR_SANDBOX', latest: placed.latest };
    }
    const sb = await this.#d.store.get(SandboxKind, conv.metadata.namespace ?? 'default', status.sandboxName);
    if (!sb || sb.metadata.deletionTimestamp) throw new StartFailure(Reason.SandboxNotFound, `Sandbox ${status.sandboxName} no longer exists`);
    if (sb.status?.phase === 'ERROR') throw new StartFailure(Reason.SandboxNotRunning, `Sandbox ${status.sandboxName} failed: ${sb.status.message ?? 'unknown error'}`);
    if (sb.status?.phase !== 'RUNNING') {
      // Waiting on a sandbox someone paused would never end: only an explicit resume wakes it.
      if (sb.spec.paused) throw new StartFailure(Reason.SandboxNotRunning, `Sandbox ${status.sandboxName} was paused before this conversation started on it; resume it and start again`);
      return { requeueAfterMs: WAIT_FOR_SANDBOX_MS };
    }
    switch (step) {
      case 'WORKING':
      case 'WAITING_FOR_SANDBOX':
        // A sandbox claimed from a warm pool gets its user's keys before anything runs on it.
        if (sb.metadata.labels?.[LABEL_CLAIMED_FROM] !== undefined) await handOver(this.#d.store, this.#d.runtime, sb);
        return { step: 'PREPARING_REPOSITORY' };
      case 'PREPARING_REPOSITORY':
        // A fork works in its source's workspace, where the repository already is.
        if (conv.spec.selectedRepository && !conv.spec.forkOf) await this.#cloneRepository(conv, sb);
        return { step: 'RUNNING_SETUP_SCRIPT' };
      // A fork works in its source's workspace, set up already, and keeps its source's agent and skills.
      case 'RUNNING_SETUP_SCRIPT':
        if (!conv.spec.forkOf) await this.#runSetupScript(conv, sb);
        return { step: 'SETTING_UP_GIT_HOOKS' };
      case 'SETTING_UP_GIT_HOOKS':
        if (!conv.spec.forkOf) await this.#installGitHooks(conv, sb);
        return { step: 'SETTING_UP_SKILLS' };
      case 'SETTING_UP_SKILLS':
        // Two passes: the first loads and reports (the step's detail names the skills), the next moves on.
        if (!status.startSkills && !conv.spec.forkOf) {
          status.startSkills = await this.#loadSkills(conv, sb);
          return { step: 'SETTING_UP_SKILLS', detail: skillsDetail(status.startSkills) };
        }
        return { step: 'STARTING_CONVERSATION' };
      case 'STARTING_CONVERSATION':
        await this.#startOnAgentServer(conv, sb, status.startSkills);
        status.initialMessageDelivered = conv.spec.initialMessage !== undefined;
        return { step: 'READY' };
      default:
        return {};
    }
  }

  async #client(conv: Conversation, sb: Sandbox, timeoutMs?: number): Promise<AgentServerClient> {
    const sessionKey = await readSessionKey(this.#d.store, conv.metadata.namespace ?? 'default', sb.metadata.name);
    return new AgentServerClient(agentServerDialUrl(sb)!, sessionKey, timeoutMs ? { timeoutMs } : {});
  }

  /** `.openhands/setup.sh`: its output becomes an event on the conversation; a failure ends the start with it. */
  async #runSetupScript(conv: Conversation, sb: Sandbox): Promise<void> {
    const secrets = await readConversationSecrets(this.#d.store, conv);
    const client = await this.#client(conv, sb, (SETUP_SCRIPT_TIMEOUT_S + 60) * 1000);
    const res = await this.#inSandbox('run the setup script', () => runSetupScript(client, conv, secrets));
    if (!res.ran) {
      if (this.#listings.size >= MAX_HELD_LISTINGS) this.#listings.delete(this.#listings.keys().next().value!);
      this.#listings.set(conv.metadata.uid ?? conv.metadata.name, res.listing);
      return;
    }
    const said = res.output ? `:\n${res.output}` : ' (no output)';
    if (res.exitCode !== 0) {
      const why = res.exitCode === -1 ? `did not finish (timed out after ${SETUP_SCRIPT_TIMEOUT_S} s, or could not start)` : `exited with ${res.exitCode}`;
      throw new StartFailure(Reason.SetupScriptFailed, `${SETUP_SCRIPT} ${why}${said}`);
    }
    this.#d.recorder?.record(conv, 'Normal', Reason.SetupScriptRan, `${SETUP_SCRIPT} exited with 0${said}`);
  }

  /** `.openhands/pre-commit.sh` becomes the repository's pre-commit hook. */
  async #installGitHooks(conv: Conversation, sb: Sandbox): Promise<void> {
    const key = conv.metadata.uid ?? conv.metadata.name;
    const listing = this.#listings.get(key);
    this.#listings.delete(key);
    const secrets = await readConversationSecrets(this.#d.store, conv);
    const client = await this.#client(conv, sb);
    const res = await this.#inSandbox('install the Git hooks', () => installGitHooks(client, conv, secrets, listing));
    if (!res.ran) return;
    if (res.exitCode !== 0) throw new StartFailure(Reason.GitHooksFailed, `Installing ${PRE_COMMIT_SCRIPT} as the pre-commit hook failed (exit ${res.exitCode})${res.output ? `:\n${res.output}` : ''}`);
    this.#d.recorder?.record(conv, 'Normal', Reason.GitHooksInstalled, `${PRE_COMMIT_SCRIPT} is the repository's pre-commit hook`);
  }

  /** A 4xx from the agent server ends the start (an old image without the command API among them); anything else is retried. */
  async #inSandbox<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isAgentyardError(err) && (err.code === 'Invalid' || err.code === 'BadRequest' || err.code === 'NotFound')) {
        throw new StartFailure(Reason.StartFailed, `The sandbox's agent server could not ${what}: ${err.message}`);
      }
      throw err;
    }
  }

  /** Configuration-repository skills, Auto-Load plugins, and the names of every skill the agent will have. */
  async #loadSkills(conv: Conversation, sb: Sandbox): Promise<NonNullable<ConversationStatus['startSkills']>> {
    const secrets = await readConversationSecrets(this.#d.store, conv);
    const client = await this.#client(conv, sb);
    const git = this.#d.git ?? DEFAULT_GIT_SETTINGS;
    const conflicts: NonNullable<SkillsResponse['conflicts']> = [];
    const skills = await orgConfigSkills(client, conv, secrets, git, this.#d.log, conflicts);
    for (const c of conflicts) {
      this.#d.recorder?.record(conv, 'Warning', Reason.SkillNameConflict, `Skill ${c.name} is defined in both microagents/ (old style) and skills/ (new style) of ${c.org}'s configuration repository; the skills/ one is used — remove the other`);
    }
    const plugins = await autoLoadPlugins(client, conv, secrets, git, { ...(this.#d.log ? { log: this.#d.log } : {}), ...(this.#d.recorder ? { recorder: this.#d.recorder } : {}) });
    const project = await sandboxSkillNames(client, conv, this.#d.log);
    const names = [...new Set([...skills.map((k) => String(k['name'])), ...project])].sort();
    const loaded = { names, skills, plugins };
    if (JSON.stringify(loaded).length > MAX_START_SKILLS_BYTES) {
      throw new StartFailure(Reason.StartFailed, `The configuration repositories' skills are larger than ${MAX_START_SKILLS_BYTES / 1024} KiB together; a conversation takes no more`);
    }
    this.#d.recorder?.record(conv, 'Normal', Reason.SkillsLoaded, skillsDetail(loaded));
    return loaded;
  }

  async #startOnAgentServer(conv: Conversation, sb: Sandbox, loaded: ConversationStatus['startSkills']): Promise<void> {
    const client = await this.#client(conv, sb);
    if (conv.spec.forkOf) return this.#forkOnAgentServer(conv, client);
    const secrets = await readConversationSecrets(this.#d.store, conv);
    loaded ??= await this.#loadSkills(conv, sb);
    try {
      await client.createConversation(agentServerStartRequest(conv, secrets, this.#d.llm, { skills: loaded.skills, plugins: loaded.plugins }));
    } catch (err) {
      // 4xx from the agent server will not heal by retrying; anything else is retried.
      if (isAgentyardError(err) && (err.code === 'Invalid' || err.code === 'BadRequest')) {
        throw new StartFailure(Reason.StartFailed, `The agent server refused the conversation: ${err.message}`);
      }
      throw err;
    }
  }

  /**
   * A fork: the agent server copies the source's events and state into a conversation with this
   * one's id. A repeated pass finds it there (409) and is done; a source gone ends the start.
   */
  async #forkOnAgentServer(conv: Conversation, client: AgentServerClient): Promise<void> {
    const src = await this.#d.store.get(ConversationKind, conv.metadata.namespace ?? 'default', conv.spec.forkOf!);
    if (!src || src.metadata.deletionTimestamp) throw new StartFailure(Reason.StartFailed, `Conversation ${conv.spec.forkOf}, which this one forks, no longer exists`);
    try {
      await client.postJson(`/api/conversations/${agentConversationId(src)}/fork`, { id: agentConversationId(conv), title: conv.spec.title ?? null });
    } catch (err) {
      if (isAgentyardError(err) && err.code === 'Conflict') return;
      if (isAgentyardError(err) && (err.code === 'Invalid' || err.code === 'BadRequest' || err.code === 'NotFound')) {
        throw new StartFailure(Reason.StartFailed, `The agent server refused the fork: ${err.message}`);
      }
      throw err;
    }
  }

  /** Clones in the sandbox; a refused clone ends the start, an unreachable agent server is retried. */
  async #cloneRepository(conv: Conversation, sb: Sandbox): Promise<void> {
    const namespace = conv.metadata.namespace ?? 'default';
    const secrets = await readConversationSecrets(this.#d.store, conv);
    const made = cloneRequest(conv, secrets, (this.#d.git ?? DEFAULT_GIT_SETTINGS).hosts);
    if ('error' in made) throw new StartFailure(Reason.StartFailed, made.error);
    const sessionKey = await readSessionKey(this.#d.store, namespace, sb.metadata.name);
    const client = new AgentServerClient(agentServerDialUrl(sb)!, sessionKey, { timeoutMs: 180_000 });
    let res;
    try {
      res = await cloneInSandbox(client, made.request);
    } catch (err) {
      if (isAgentyardError(err) && (err.code === 'Invalid' || err.code === 'BadRequest')) {
        throw new StartFailure(Reason.StartFailed, `The sandbox refused to clone ${conv.spec.selectedRepository}: ${err.message}`);
      }
      if (isAgentyardError(err) && err.code === 'NotFound') {
        throw new StartFailure(Reason.StartFailed, `The sandbox's agent server cannot clone repositories (it has no POST /api/agentyard/git/clone); update its image`);
      }
      throw err;
    }
    const failure = cloneFailure(conv, res);
    if (failure) throw new StartFailure(Reason.StartFailed, failure);
  }

  async #serialised<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#placing.then(fn, fn);
    this.#placing = run.catch(() => undefined);
    return run;
  }

  /**
   * Chooses the sandbox, records the choice on the conversation (label), and only then creates a
   * new sandbox if one is needed: a pass that dies in between finds its choice again, and a new
   * sandbox is named after its conversation, so a repeated create is a harmless Conflict.
   */
  async #place(conv: Conversation): Promise<{ name: string; latest: Conversation }> {
    const namespace = conv.metadata.namespace ?? 'default';
    const owner = conv.spec.owner;
    const explicit = conv.spec.sandboxName;
    let placement: { name: string; create?: Sandbox };
    if (explicit) {
      const sb = await this.#d.store.get(SandboxKind, namespace, explicit);
      if (!sb || sb.metadata.deletionTimestamp || !sameOwner(sb, owner) || isUnclaimedMember(sb)) throw new StartFailure(Reason.SandboxNotFound, `Sandbox ${explicit} does not exist`);
      if (sb.status?.phase !== 'RUNNING') {
        throw new StartFailure(Reason.SandboxNotRunning, `Sandbox ${explicit} is ${sb.status?.phase ?? 'STARTING'}; an explicit sandbox_id must be RUNNING`);
      }
      placement = { name: explicit };
    } else {
      placement = (await this.#earlierChoice(conv, namespace, owner)) ?? (await this.#choose(conv, namespace, owner));
    }
    const agentId = agentConversationId(conv);
    const labels = { ...conv.metadata.labels, [LABEL_SANDBOX]: placement.name, ...(agentId !== conv.metadata.name ? { [LABEL_AGENT_CONVERSATION]: agentId } : {}) };
    let latest = conv;
    if (!isDeepStrictEqual(labels, conv.metadata.labels)) {
      latest = await this.#d.store.update(ConversationKind, { ...conv, metadata: { ...conv.metadata, labels } });
    }
    if (placement.create) {
      try {
        await this.#d.store.create(SandboxKind, placement.create);
      } catch (err) {
        if (!(err instanceof Conflict)) throw err;
      }
    }
    return { name: placement.name, latest };
  }

  /** A pass that labelled the conversation and died before its status write: keep that choice. */
  async #earlierChoice(conv: Conversation, namespace: string, owner: string | undefined): Promise<{ name: string } | undefined> {
    const labelled = conv.metadata.labels?.[LABEL_SANDBOX];
    if (!labelled) return undefined;
    const sb = await this.#d.store.get(SandboxKind, namespace, labelled);
    return sb && !sb.metadata.deletionTimestamp && !sb.spec.paused && sameOwner(sb, owner) && sb.status?.phase !== 'ERROR' ? { name: labelled } : undefined;
  }

  async #choose(conv: Conversation, namespace: string, owner: string | undefined): Promise<{ name: string; create?: Sandbox }> {
    const { items: sandboxes } = await this.#d.store.list(SandboxKind, namespace);
    const reclaimed = earlierClaim(sandboxes, conv.metadata.name, owner);
    if (reclaimed) return { name: reclaimed.metadata.name };
    const mine = sandboxes.filter((sb) => sameOwner(sb, owner) && !isUnclaimedMember(sb));
    const grouping = conv.spec.sandboxGrouping ?? 'NO_GROUPING';
    // Only FEWEST_CONVERSATIONS weighs conversations: every other start read (and decoded) every
    // Conversation of the namespace for nothing.
    const counts = new Map<string, number>();
    if (grouping === 'FEWEST_CONVERSATIONS' && mine.length > 0) {
      for (const c of (await this.#d.store.list(ConversationKind, namespace)).items) {
        const placed = c.status?.sandboxName ?? c.metadata.labels?.[LABEL_SANDBOX];
        if (placed) counts.set(placed, (counts.get(placed) ?? 0) + 1);
      }
    }
    const chosen = chooseSandbox(grouping, mine, counts);
    if (chosen) return { name: chosen.metadata.name };

    // A ready warm-pool member takes no new slot: it held one while it waited.
    const nowIso = this.#d.clock.now().toUTC().toISO()!;
    const claimed = await claimMember(this.#d.store, { namespace, owner, conversation: conv.metadata.name, spec: {}, nowIso }, sandboxes);
    if (claimed) {
      this.#d.warmPools?.hit(claimed.metadata.labels?.[LABEL_CLAIMED_FROM] ?? '');
      this.#d.log?.info({ conversation: conv.metadata.name, sandbox: claimed.metadata.name, pool: claimed.metadata.labels?.[LABEL_CLAIMED_FROM] }, 'claimed a warm-pool sandbox');
      return { name: claimed.metadata.name };
    }

    const name = conv.metadata.name;
    const active = sandboxes.filter(holdsCapacity).length;
    if (active >= this.#d.settings.capacity) {
      throw new StartFailure(Reason.CapacityExceeded, `The installation's sandbox capacity (${this.#d.settings.capacity}) is reached; try again when a sandbox is paused or deleted`);
    }
    const create: Sandbox = {
      apiVersion: API_VERSION,
      kind: 'Sandbox',
      metadata: { name, namespace, labels: owner ? { [LABEL_OWNER]: owner } : {}, annotations: { [ANNOTATION_CREATED_AT]: this.#d.clock.now().toUTC().toISO()! } },
      spec: { ...(owner ? { owner } : {}), paused: false },
    };
    this.#d.warmPools?.miss();
    return { name, create };
  }

  #setStep(status: ConversationStatus, step: StartTaskStatus, conv: Conversation, detail?: string, reason?: string): void {
    const now = this.#d.clock.now().toISO()!;
    status.startTask = { status: step, ...(detail ? { detail } : {}), updatedAt: now };
    status.observedGeneration = conv.metadata.generation;
    const done = step === 'READY';
    const failed = step === 'ERROR';
    status.conditions = setCondition(
      status.conditions ?? [],
      {
        type: ConditionType.Ready,
        status: done ? 'True' : 'False',
        reason: done ? Reason.Ready : failed ? (reason ?? Reason.StartFailed) : step,
        message: detail ?? (done ? 'The conversation is running on its sandbox' : `Start task: ${step}`),
      },
      now,
      conv.metadata.generation,
    );
    if (status.sandboxName) {
      status.conditions = setCondition(
        status.conditions,
        { type: ConditionType.Placed, status: 'True', reason: Reason.Placed, message: `Placed on sandbox ${status.sandboxName}` },
        now,
        conv.metadata.generation,
      );
    }
  }

  /** Writes only this reconciler's fields over the latest object, so the facade's fields survive. */
  async #writeStatus(conv: Conversation, status: ConversationStatus): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const latest = attempt === 0 ? conv : await this.#d.store.get(ConversationKind, conv.metadata.namespace ?? 'default', conv.metadata.name);
      if (!latest) return;
      const merged: ConversationStatus = {
        ...status,
        ...(latest.status?.executionStatus ? { executionStatus: latest.status.executionStatus } : {}),
        ...(latest.status?.metrics ? { metrics: latest.status.metrics } : {}),
      };
      try {
        await this.#d.store.updateStatus(ConversationKind, { ...latest, status: merged });
        return;
      } catch (err) {
        if (!(err instanceof Conflict) || attempt >= 5) throw err;
      }
    }
  }
}

export { START_TASK_STEPS };

/** Sandboxes created with kubectl have no owner and serve only owner-less conversations, and vice versa. */
function sameOwner(sb: Sandbox, owner: string | undefined): boolean {
  return (sb.spec.owner ?? '') === (owner ?? '');
}
