// POST /api/v1/app-conversations: writes the per-conversation Secret (if any) and the Conversation
// resource; the controller does the rest and reports progress in status.startTask. Never leaves a
// half-created pair behind: the Secret is created first and removed again if the Conversation fails.
import { randomUUID } from 'node:crypto';
import { ANNOTATION_CREATED_AT, API_VERSION, LABEL_OWNER, LABEL_START_TASK } from '../api/meta.ts';
import { ConversationKind, type Conversation, type ConversationSpec } from '../api/conversation.ts';
import { Conflict, Invalid, isAgentyardError, NotFound, type ValidationIssue } from '../api/errors.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { SecretKind, type Secret } from '../api/secret.ts';
import { admit, needsNewSandbox } from './admission.ts';
import { autoLoadFor } from './marketplaces.ts';
import { storedSecretValues } from './user-secrets.ts';
import type { AppUser } from './db/app-db.ts';
import type { FacadeDeps } from './deps.ts';
import { ANNOTATION_SECRET_NAMES, LABEL_PARENT, startTaskRecord } from './records.ts';
import { getOwned, normalizeId, sandboxNameOf, sandboxPhase } from './resources.ts';
import { startDefaults } from './llm-settings.ts';
import { MAX_SECRET_VALUE_BYTES, MAX_SECRETS, messageSizeIssue, type AppConversationStartRequest, type SuggestedTask } from '../api/app/requests.ts';

/** Names the agent server and runtimes use for themselves; a secret may not shadow them. */
const RESERVED_NAMES = new Set([
  'OPENVSCODE_SERVER_ROOT',
  'OH_ENABLE_VNC',
  'LOG_JSON',
  'OH_CONVERSATIONS_PATH',
  'OH_BASH_EVENTS_DIR',
  'PYTHONUNBUFFERED',
  'ENV_LOG_LEVEL',
  'OH_WEBHOOKS_0_BASE_URL',
  'OH_ALLOW_CORS_ORIGINS_0',
  'OH_ALLOW_CORS_ORIGINS',
  'OH_APP_BACKEND_PUBLIC_URL',
  'OH_TRUST_FORWARDED_HEADERS',
  'OH_SESSION_API_KEYS_0',
  'OH_SECRET_KEY',
  'WORKER_1',
  'WORKER_2',
]);
const RESERVED_PREFIXES = ['LLM_', 'AGENTYARD_'];
/** Kubernetes Secret data keys. */
const SECRET_NAME = /^[-._a-zA-Z0-9]{1,253}$/;

export function newId(): string {
  return randomUUID().replaceAll('-', '');
}

/** Names the service keeps for itself: no conversation or stored secret may take them. */
export function isReservedSecretName(name: string): boolean {
  return RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((p) => name.startsWith(p));
}

function secretIssues(secrets: Record<string, string>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const names = Object.keys(secrets);
  if (names.length > MAX_SECRETS) issues.push({ loc: ['body', 'secrets'], msg: `At most ${MAX_SECRETS} secrets`, type: 'too_long' });
  for (const name of names) {
    const loc = ['body', 'secrets', name];
    if (!SECRET_NAME.test(name)) issues.push({ loc, msg: 'Secret names may contain only letters, digits, "-", "_" and "."', type: 'string_pattern_mismatch' });
    else if (isReservedSecretName(name)) {
      issues.push({ loc, msg: 'This name is reserved for the service and cannot be a conversation secret', type: 'value_error' });
    }
    if (Buffer.byteLength(secrets[name]!, 'utf8') > MAX_SECRET_VALUE_BYTES) issues.push({ loc, msg: 'Secret values are limited to 64 KiB', type: 'too_long' });
  }
  return issues;
}

/** Values this short are too common to tell a secret from ordinary text. */
const MIN_CHECKED_SECRET_LENGTH = 8;

/** Spec part 2, rule 4: no secret value in the initial message (it is stored and shown as typed). */
function initialMessageIssues(req: AppConversationStartRequest, secrets: Record<string, string>): ValidationIssue[] {
  const texts = (req.initial_message?.content ?? []).map((c) => c.text);
  const leaked = Object.entries(secrets).filter(([, v]) => v.length >= MIN_CHECKED_SECRET_LENGTH && texts.some((t) => t.includes(v)));
  return leaked.map(([name]) => ({
    loc: ['body', 'initial_message', 'content'],
    msg: `The initial message contains the value of secret ${name}; refer to it by name (the agent has it as $${name})`,
    type: 'value_error',
  }));
}

/** The initial message a suggested task stands for (OpenHands writes one per task type). */
export function suggestedTaskMessage(t: SuggestedTask): string {
  const ref = `${t.repo}#${t.issue_number}`;
  const what: Record<SuggestedTask['task_type'], string> = {
    MERGE_CONFLICTS: `Resolve the merge conflicts of pull request ${ref} ("${t.title}") and push the result to its branch.`,
    FAILING_CHECKS: `Fix the failing checks of pull request ${ref} ("${t.title}") and push the fix to its branch.`,
    UNRESOLVED_COMMENTS: `Address the unresolved review comments of pull request ${ref} ("${t.title}") and push the changes to its branch.`,
    OPEN_ISSUE: `Resolve issue ${ref} ("${t.title}"): read it, make the change it asks for and open a pull request.`,
    OPEN_PR: `Finish pull request ${ref} ("${t.title}"): read it and its discussion, complete the work and push to its branch.`,
    CREATE_MICROAGENT: `Write a skill for repository ${t.repo} that captures what ${ref} ("${t.title}") teaches.`,
  };
  return `${what[t.task_type]} (on ${t.git_provider})`;
}

function startRequestIssues(req: AppConversationStartRequest): ValidationIssue[] {
  if (req.suggested_task && req.initial_message) {
    const msg = 'suggested_task writes the initial message; send one or the other';
    return [
      { loc: ['body', 'suggested_task'], msg, type: 'value_error' },
      { loc: ['body', 'initial_message'], msg, type: 'value_error' },
    ];
  }
  return [];
}

/** OpenHands client fields stored as given (records show them; unapplied_fields says which change nothing). */
function clientFieldsOf(req: AppConversationStartRequest): ConversationSpec['clientFields'] {
  const f: NonNullable<ConversationSpec['clientFields']> = {};
  const trigger = req.trigger ?? (req.suggested_task ? 'suggested_task' : undefined);
  if (trigger) f.trigger = trigger;
  if (req.pr_number?.length) f.prNumbers = req.pr_number;
  if (req.public !== undefined && req.public !== null) f.public = req.public;
  if (req.suggested_task) f.suggestedTask = { ...req.suggested_task };
  if (req.processors?.length) f.processors = req.processors;
  if (req.agent_profile_id) f.agentProfileId = req.agent_profile_id;
  return Object.keys(f).length > 0 ? f : undefined;
}

/**
 * A sub-conversation inherits what OpenHands lets it inherit and the caller left out: repository,
 * branch, provider, model, and the parent's sandbox while that one is RUNNING (a paused or gone
 * sandbox is not waited for; the conversation is placed as any other).
 */
async function inheritFromParent(d: FacadeDeps, req: AppConversationStartRequest, parent: Conversation): Promise<AppConversationStartRequest> {
  const p = parent.spec;
  const out = { ...req };
  if (!out.selected_repository && p.selectedRepository) {
    out.selected_repository = p.selectedRepository;
    out.selected_branch ??= p.selectedBranch ?? null;
    out.git_provider ??= p.gitProvider ?? null;
  }
  if (!out.llm_model && p.llmModel) out.llm_model = p.llmModel;
  const parentSandbox = sandboxNameOf(parent);
  if (!out.sandbox_id && parentSandbox) {
    const sb = await d.store.get(SandboxKind, d.namespace, parentSandbox);
    if (sb && sandboxPhase(sb) === 'RUNNING' && sb.spec.paused !== true) out.sandbox_id = parentSandbox;
  }
  return out;
}

function specOf(req: AppConversationStartRequest, user: AppUser, grouping: ConversationSpec['sandboxGrouping'], parent: string | undefined): ConversationSpec {
  const spec: ConversationSpec = { owner: user.id };
  if (req.llm_model) spec.llmModel = req.llm_model;
  if (req.system_message_suffix) spec.systemMessageSuffix = req.system_message_suffix;
  if (req.agent_type === 'plan') spec.agentType = 'plan';
  if (parent) spec.parentConversation = parent;
  const client = clientFieldsOf(req);
  if (client) spec.clientFields = client;
  if (req.title) spec.title = req.title;
  if (req.sandbox_id) spec.sandboxName = req.sandbox_id;
  else spec.sandboxGrouping = grouping;
  if (req.initial_message) spec.initialMessage = req.initial_message;
  else if (req.suggested_task) spec.initialMessage = { role: 'user', content: [{ type: 'text', text: suggestedTaskMessage(req.suggested_task) }], run: true };
  if (req.suggested_task && !req.selected_repository) {
    spec.selectedRepository = req.suggested_task.repo;
    spec.gitProvider = req.suggested_task.git_provider;
  }
  if (req.selected_repository) spec.selectedRepository = req.selected_repository;
  if (req.selected_branch) spec.selectedBranch = req.selected_branch;
  if (req.git_provider) spec.gitProvider = req.git_provider;
  if (req.git_user_name) spec.gitUserName = req.git_user_name;
  if (req.git_user_email) spec.gitUserEmail = req.git_user_email;
  if (req.plugins) spec.plugins = req.plugins;
  const obs: NonNullable<ConversationSpec['observability']> = {};
  if (req.observability_span_name) obs.spanName = req.observability_span_name;
  if (req.observability_tags) obs.tags = req.observability_tags;
  if (req.observability_metadata) obs.metadata = req.observability_metadata;
  if (Object.keys(obs).length > 0) spec.observability = obs;
  return spec;
}

/** A caller-chosen id is taken by any conversation, anyone's, and by one deleted through the API. */
async function claimId(d: FacadeDeps, requested: string): Promise<string> {
  const id = normalizeId(requested)!;
  if ((await d.store.get(ConversationKind, d.namespace, id)) || (await d.db.deletedBy('Conversation', id)) !== undefined) {
    throw new Conflict(`Conversation id ${id} is taken; choose another conversation_id or leave it out`);
  }
  return id;
}

export async function startConversation(d: FacadeDeps, user: AppUser, sent: AppConversationStartRequest): Promise<Record<string, unknown>> {
  const secrets = sent.secrets ?? {};
  const tooLong = messageSizeIssue(sent.initial_message, ['body', 'initial_message']);
  const issues = [...(tooLong ? [tooLong] : []), ...startRequestIssues(sent), ...secretIssues(secrets), ...initialMessageIssues(sent, { ...(await storedSecretValues(d, user)), ...secrets })];
  if (issues.length > 0) throw new Invalid(issues);

  let req = sent;
  let parentName: string | undefined;
  if (sent.parent_conversation_id) {
    const parent = await getOwned(d, ConversationKind, user.id, sent.parent_conversation_id);
    if (!parent) throw new NotFound(`Parent conversation ${sent.parent_conversation_id} not found`);
    parentName = parent.metadata.name;
    req = await inheritFromParent(d, sent, parent);
  }

  const settings = await d.db.getSettings(user.id);
  const grouping = settings.sandbox_grouping_strategy;
  if (req.sandbox_id) {
    const sb = await getOwned(d, SandboxKind, user.id, req.sandbox_id);
    if (!sb) throw new NotFound(`Sandbox ${req.sandbox_id} not found`);
    const phase = sandboxPhase(sb);
    if (phase !== 'RUNNING' || sb.spec.paused === true) {
      throw new Conflict(`Sandbox ${req.sandbox_id} is ${sb.spec.paused && phase === 'RUNNING' ? 'pausing' : phase}; a conversation can only be attached to a RUNNING sandbox`);
    }
  } else if (await needsNewSandbox(d, user.id, grouping)) {
    await admit(d, 'Starting this conversation', { warmPool: true });
  }

  const id = req.conversation_id ? await claimId(d, req.conversation_id) : newId();
  const names = Object.keys(secrets);
  const labels: Record<string, string> = { [LABEL_OWNER]: user.id, ...(parentName ? { [LABEL_PARENT]: parentName } : {}) };
  const spec = specOf(req, user, grouping, parentName);
  // The caller's settings (agent_settings.llm, conversation_settings) where the request says nothing.
  const defaults = await startDefaults(d, user);
  if (!spec.llmModel && defaults.model) spec.llmModel = defaults.model;
  if (defaults.maxIterations) spec.maxIterations = defaults.maxIterations;
  if (defaults.confirmationMode) spec.confirmationMode = defaults.confirmationMode;
  if (settings.git_login) spec.ownerGitLogin = { login: settings.git_login, provider: settings.git_login_provider };
  const autoLoad = await autoLoadFor(d, user, req.selected_repository);
  if (autoLoad.length > 0) spec.autoLoadMarketplaces = autoLoad;
  let secret: Secret | undefined;
  if (names.length > 0) {
    spec.secretsRef = `${id}-secrets`;
    secret = await d.store.create(SecretKind, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: spec.secretsRef, namespace: d.namespace, labels },
      type: 'Opaque',
      data: Object.fromEntries(names.map((n) => [n, Buffer.from(secrets[n]!, 'utf8').toString('base64')])),
    });
  }
  const draft: Conversation = {
    apiVersion: API_VERSION,
    kind: 'Conversation',
    metadata: {
      name: id,
      namespace: d.namespace,
      labels: { ...labels, [LABEL_START_TASK]: newId() },
      // Milliseconds, so two conversations started within one second still list newest first.
      annotations: { [ANNOTATION_CREATED_AT]: d.clock.now().toUTC().toISO()!, ...(names.length > 0 ? { [ANNOTATION_SECRET_NAMES]: names.join(',') } : {}) },
    },
    spec,
  };
  let conv: Conversation;
  try {
    conv = await d.store.create(ConversationKind, draft);
  } catch (err) {
    // Two starts racing for one caller-chosen id: the loser hears what the check would have said.
    if (req.conversation_id && isAgentyardError(err) && err.code === 'Conflict') err = new Conflict(`Conversation id ${id} is taken; choose another conversation_id or leave it out`);
    if (secret) await d.store.delete(SecretKind, d.namespace, secret.metadata.name).catch((e: unknown) => d.log?.warn({ err: e }, 'removing the secret of a failed start failed'));
    throw err;
  }
  if (secret) await adoptSecret(d, secret, conv);
  return startTaskRecord(conv, undefined);
}

/** Lets garbage collection remove the Secret with its Conversation (cleanup.ts also does). */
async function adoptSecret(d: FacadeDeps, secret: Secret, conv: Conversation): Promise<void> {
  const ref = { apiVersion: API_VERSION, kind: 'Conversation', name: conv.metadata.name, uid: conv.metadata.uid! };
  try {
    await d.store.update(SecretKind, { ...secret, metadata: { ...secret.metadata, ownerReferences: [ref] } });
  } catch (err) {
    d.log?.warn({ err, conversation: conv.metadata.name }, 'could not set the owner of a conversation secret; cleanup removes it later');
  }
}
