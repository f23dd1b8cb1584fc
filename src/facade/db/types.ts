// The app store: what the API keeps besides resources (users, hashed API keys, settings, the durable
// event log, conversation metadata, queued messages). Two implementations with one behaviour:
// SQLite (bundled, one API replica) and PostgreSQL (external, several replicas). Every method is
// async so callers do not care which one they hold.
import type { GitProvider, SandboxGrouping } from '../../api/conversation.ts';
import type { Event } from '../../api/events/index.ts';
import { Conflict } from '../../api/errors.ts';

/** A second user for an installation that can only keep one apart from nobody. */
export class SingleUserInstallation extends Conflict {
  constructor(reason: string) {
    super(
      `this installation serves one user only: its sandboxes are not isolated from each other (${reason}). ` +
        'Run `agentyard up` as root with bubblewrap installed (see README, "Sandbox isolation") to add users.',
    );
  }
}

import type { LoginStore } from './logins.ts';

export interface AppUser {
  id: string;
  name: string;
}

export interface UserSettings {
  sandbox_grouping_strategy: SandboxGrouping;
  /** The user's login on a Git host, whose configuration repository gives user skills; null when unset. */
  git_login: string | null;
  git_login_provider: GitProvider;
}

export const DEFAULT_SETTINGS: UserSettings = { sandbox_grouping_strategy: 'NO_GROUPING', git_login: null, git_login_provider: 'github' };

export interface ApiKeyInfo {
  prefix: string;
  created_at: string;
  /** When it was revoked; null while it works. Revoked keys are kept, so a chosen key (AGENTYARD_API_KEY) stays revoked. */
  revoked_at: string | null;
}

/** A user as administrators see it. */
export interface UserInfo {
  id: string;
  name: string;
  admin: boolean;
  created_at: string;
  /** When it was disabled; null while enabled. A disabled user's keys are refused. */
  disabled_at: string | null;
}

/** What revoking a key by its display prefix did. */
export type RevokeResult = 'revoked' | 'not-found' | 'ambiguous';

export interface ConversationMeta {
  title: string | null;
  updatedAt: string | null;
}

export interface EventFilter {
  /** Short kind name (already normalised from any OpenHands spelling). */
  kind?: string;
  /** Normalised UTC ISO timestamps. */
  timestampGte?: string;
  timestampLt?: string;
}

export interface EventQuery extends EventFilter {
  /** Inclusive cursor: the seq of the first event of the page. */
  fromSeq?: number;
  limit: number;
  descending?: boolean;
  /** Items in OpenHands' `exclude_none` form, as the API sends them, instead of the full stored form. */
  wire?: boolean;
}

export interface EventPage {
  items: string[];
  /** Seq of the first event of the next page, or null on the last page. */
  nextSeq: number | null;
}

export interface IngestItem {
  seq: number;
  event: Event;
}

export interface IngestResult {
  acknowledgedSeq: number;
  /** Seqs already held with a different event id (kept as first stored). */
  mismatched: number[];
}

/** The app's durable copy of every conversation's events. Cursors are sequence numbers. */
export interface EventStore {
  /** Stores a batch idempotently (by seq and by event id) and returns the gap-free high mark. */
  ingest(conversationId: string, items: readonly IngestItem[]): Promise<IngestResult>;
  acknowledgedSeq(conversationId: string): Promise<number>;
  /** Stored JSON of each id, aligned with the input; undefined where the conversation has none. */
  getMany(conversationId: string, ids: readonly string[], opts?: { wire?: boolean }): Promise<(string | undefined)[]>;
  search(conversationId: string, q: EventQuery): Promise<EventPage>;
  count(conversationId: string, f: EventFilter): Promise<number>;
  /** Timestamp of the newest event, or undefined when there is none. */
  lastTimestamp(conversationId: string): Promise<string | undefined>;
  /** The same for many conversations in one query (a page of records): those without events are absent. */
  lastTimestamps(conversationIds: readonly string[]): Promise<Map<string, string>>;
  /** Every conversation id with stored events or a cursor. */
  conversationIds(): Promise<string[]>;
  purge(conversationId: string): Promise<void>;
}

export interface PendingMessage {
  id: number;
  conversationId: string;
  body: { role: 'user'; content: unknown[]; run: boolean };
  createdAt: string;
}

/** Messages waiting for their conversation's sandbox, delivered in order. */
export interface PendingStore {
  add(conversationId: string, body: PendingMessage['body'], createdAt: string): Promise<number>;
  /** Oldest first. */
  list(conversationId: string): Promise<PendingMessage[]>;
  count(conversationId: string): Promise<number>;
  /**
   * Takes the message for delivery: true when this caller now holds it (nobody else holds an
   * unexpired claim and it is still queued). With several API replicas only one delivers it.
   */
  claim(id: number, leaseMs: number): Promise<boolean>;
  /** Gives a claimed message back (delivery failed and will be retried). */
  release(id: number): Promise<void>;
  remove(id: number): Promise<void>;
  purge(conversationId: string): Promise<void>;
  conversationIds(): Promise<string[]>;
}

/** One model call the model gateway forwarded, as the provider reported its usage. */
export interface ModelUsageRecord {
  /** The sandbox's owner; null for a sandbox without one (applied with kubectl). */
  userId: string | null;
  sandboxId: string;
  /** The conversation the call was for, when the agent server named one attached to the sandbox. */
  conversationId: string | null;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  /** What the provider reported in `usage.cost`, else 0. */
  cost: number;
  /** UTC ISO. */
  at: string;
}

export interface UsageTotals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cache_read_tokens: number;
  reasoning_tokens: number;
  cost: number;
}

export type UsageGroup = 'user' | 'sandbox' | 'conversation' | 'model';

/** The gateway's record of model usage: kept when conversations and sandboxes are deleted (it is accounting). */
export interface ModelUsageStore {
  record(r: ModelUsageRecord): Promise<void>;
  /** Totals per value of `group` (most calls first), over one user's calls or everyone's. */
  summary(group: UsageGroup, filter?: { userId?: string }): Promise<(UsageTotals & { key: string | null })[]>;
  total(filter?: { userId?: string }): Promise<UsageTotals>;
}

/** Resources a user can delete through the API, and so have a tombstone. */
export type TombstoneKind = 'Conversation' | 'Sandbox';

export interface AppStore {
  readonly events: EventStore;
  readonly pending: PendingStore;
  readonly usage: ModelUsageStore;
  /** OpenID Connect identities, browser sessions and login requests (db/logins.ts). */
  readonly logins: LoginStore;
  /** Refused (SingleUserInstallation) when the installation is single-user and has a user already. */
  createUser(name: string, id?: string): Promise<AppUser>;
  countUsers(): Promise<number>;
  /**
   * Marks the installation single-user, with the reason (embedded mode whose sandboxes are not
   * isolated from each other), or clears the mark (undefined). While marked, no second user.
   */
  setSingleUser(reason: string | undefined): Promise<void>;
  singleUserReason(): Promise<string | undefined>;
  getUser(id: string): Promise<AppUser | undefined>;
  /** Issues a new key. The plaintext is returned once; only its hash is kept. */
  createApiKey(userId: string): Promise<string>;
  /** Registers a key chosen by the operator (AGENTYARD_API_KEY); idempotent. Only its hash is kept. */
  addApiKey(userId: string, key: string): Promise<void>;
  listApiKeys(userId: string): Promise<ApiKeyInfo[]>;
  /** The user of a key that is not revoked, when the user is not disabled. */
  findUserByApiKey(key: string): Promise<AppUser | undefined>;
  /**
   * Revokes the user's working key shown as `prefix` (what listApiKeys shows). `ambiguous` when two
   * working keys of the user share it: nothing is revoked then.
   */
  revokeApiKey(userId: string, prefix: string): Promise<RevokeResult>;
  getUserInfo(id: string): Promise<UserInfo | undefined>;
  listUsers(): Promise<UserInfo[]>;
  /** false when there is no such user. */
  setUserDisabled(id: string, disabled: boolean): Promise<boolean>;
  setUserAdmin(id: string, admin: boolean): Promise<boolean>;
  getSettings(userId: string): Promise<UserSettings>;
  setSettings(userId: string, patch: Partial<UserSettings>): Promise<UserSettings>;
  /** Title and last update as the agent server reported them. */
  getConversationMeta(conversationId: string): Promise<ConversationMeta>;
  /** The same for many conversations in one query (a page of records): every id has an entry. */
  getConversationMetas(conversationIds: readonly string[]): Promise<Map<string, ConversationMeta>>;
  setConversationMeta(conversationId: string, meta: ConversationMeta): Promise<void>;
  /** Everything the app keeps about a conversation that no longer exists; remembers that it existed. */
  purgeConversation(conversationId: string): Promise<void>;
  wasDeleted(conversationId: string): Promise<boolean>;
  /** Remembers that `ownerId` deleted the resource (the latest deletion of a reused name wins). */
  recordDeletion(kind: TombstoneKind, name: string, ownerId: string): Promise<void>;
  /** Who deleted the resource through the API, or undefined when nobody did. */
  deletedBy(kind: TombstoneKind, name: string): Promise<string | undefined>;
  /** Conversation ids the app holds any data for. */
  conversationIds(): Promise<string[]>;
  close(): Promise<void>;
}
