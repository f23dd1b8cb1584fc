// Secrets in OpenHands' encrypted wire form (fernet.ts), both ways, as 1.58 does:
// - out: GET /api/settings with `X-Expose-Secrets: encrypted` answers each secret field as a token
//   of the server's secret key, for a client (a browser) that must not hold the values but sends
//   them back;
// - in: a start request with `secrets_encrypted: true`, a PATCH of the settings, an LLM profile saved
//   or validated, and switch_llm carry such tokens where a secret goes, and the server opens them
//   before anything else sees the request.
//
// Where secrets go (1.58's SecretStr fields and secret maps, as far as this server has them): the
// LLM's key fields (LLM_SECRET_FIELDS), a condenser's LLM, a critic's `api_key`
// (agent_settings: `verification.critic_api_key`), MCP servers' `env` and `headers` values (the
// server map or `{"mcpServers": ...}`), `agent_context.secrets`, and the request's `secrets`
// (StaticSecret values, LookupSecret headers).
//
// As 1.58, a value that does not look like a token (FERNET_TOKEN_PREFIX) is taken as plaintext. Where
// 1.58 quietly drops a token it cannot open (the secret becomes null, or the ciphertext is kept as
// the value), this server refuses the request (422 at the field: another OH_SECRET_KEY made it), so
// a conversation never runs with a missing or a garbled credential. The 422 never repeats the value.
import type { StartConversationRequest } from '../api/agent-server/conversation.ts';
import { Invalid, Unavailable, type ValidationIssue } from '../api/errors.ts';
import type { Fernet } from './fernet.ts';
import { looksEncrypted } from './fernet.ts';
import { LLM_SECRET_FIELDS, secretPaths, type SettingsDoc } from './settings-doc.ts';

type Json = Record<string, unknown>;
type Loc = (string | number)[];

/** 1.58's answer (settings GET, 503) when tokens are asked for and the server has no secret key. */
export const NO_CIPHER = 'Encryption not available: OH_SECRET_KEY is not configured. Cannot return encrypted secrets.';
/** 1.58's refusal of `secrets_encrypted: true` without a secret key. */
export const NO_CIPHER_TO_DECRYPT = 'Cannot decrypt secrets: cipher not configured. Set OH_SECRET_KEY environment variable.';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Opens tokens in place; collects a located issue for each token `fernet` cannot open. */
class Opener {
  readonly issues: ValidationIssue[] = [];
  readonly fernet: Fernet;
  constructor(fernet: Fernet) {
    this.fernet = fernet;
  }

  field(obj: Json, key: string, loc: Loc): void {
    const v = obj[key];
    if (typeof v !== 'string' || !looksEncrypted(v)) return;
    const opened = this.fernet.decrypt(v);
    if (opened === undefined) this.issues.push({ loc: [...loc, key], msg: "Value error, an encrypted secret that this agent server's OH_SECRET_KEY cannot decrypt (made by a server with another key, or altered)", type: 'value_error' });
    else obj[key] = opened;
  }

  map(m: unknown, loc: Loc): void {
    if (isObject(m)) for (const k of Object.keys(m)) this.field(m, k, loc);
  }

  llm(llm: unknown, loc: Loc): void {
    if (isObject(llm)) for (const f of LLM_SECRET_FIELDS) this.field(llm, f, loc);
  }

  mcp(config: unknown, loc: Loc): void {
    if (!isObject(config)) return;
    const [servers, at] = isObject(config['mcpServers']) ? [config['mcpServers'], [...loc, 'mcpServers']] : [config, loc];
    for (const [name, server] of Object.entries(servers)) this.server(server, [...at, name]);
  }

  server(server: unknown, loc: Loc): void {
    if (!isObject(server)) return;
    this.map(server['env'], [...loc, 'env']);
    this.map(server['headers'], [...loc, 'headers']);
  }

  /** An `agent` (Agent, ACPAgent) or `agent_settings` document: every place 1.58 keeps a secret. */
  agent(agent: unknown, loc: Loc): void {
    if (!isObject(agent)) return;
    this.llm(agent['llm'], [...loc, 'llm']);
    if (isObject(agent['condenser'])) this.llm(agent['condenser']['llm'], [...loc, 'condenser', 'llm']);
    if (isObject(agent['critic'])) this.field(agent['critic'], 'api_key', [...loc, 'critic']);
    if (isObject(agent['verification'])) this.field(agent['verification'], 'critic_api_key', [...loc, 'verification']);
    this.mcp(agent['mcp_config'], [...loc, 'mcp_config']);
    if (isObject(agent['agent_context'])) this.map(agent['agent_context']['secrets'], [...loc, 'agent_context', 'secrets']);
    // The routing tool's inline LLMs: agent_settings' `meta_profile_llms`, or the tool's params in an `agent`.
    this.llms(agent['meta_profile_llms'], [...loc, 'meta_profile_llms']);
    if (Array.isArray(agent['tools'])) agent['tools'].forEach((t, i) => isObject(t) && isObject(t['params']) && this.llms(t['params']['meta_profile_llms'], [...loc, 'tools', i, 'params', 'meta_profile_llms']));
  }

  llms(byName: unknown, loc: Loc): void {
    if (isObject(byName)) for (const [name, llm] of Object.entries(byName)) this.llm(llm, [...loc, name]);
  }

  done(): void {
    if (this.issues.length) throw new Invalid(this.issues);
  }
}

/**
 * A start request with `secrets_encrypted: true`, its tokens opened (a new object; the caller's is
 * untouched), marked `secrets_encrypted: false` since it now carries values. Without a secret key
 * the request is refused (503, as GET /api/settings with encrypted): a token is never taken as the
 * secret itself.
 */
export function openStartRequest(req: StartConversationRequest, fernet: Fernet | undefined): StartConversationRequest {
  if (!req.secrets_encrypted) return req;
  if (!fernet) throw new Unavailable(NO_CIPHER_TO_DECRYPT);
  const copy = structuredClone(req) as StartConversationRequest & Json;
  const open = new Opener(fernet);
  open.agent(copy.agent, ['body', 'agent']);
  open.agent(copy.agent_settings, ['body', 'agent_settings']);
  for (const [name, secret] of Object.entries((copy.secrets ?? {}) as Json)) {
    const loc = ['body', 'secrets', name];
    if (isObject(secret)) {
      open.field(secret, 'value', loc);
      open.map(secret['headers'], [...loc, 'headers']);
    }
  }
  open.done();
  return { ...copy, secrets_encrypted: false };
}

/** A PATCH /api/settings `agent_settings_diff` (raw, in place): its tokens opened. Without a key nothing is opened (1.58 stores the text as given). */
export function openAgentSettingsDiff(diff: unknown, fernet: Fernet | undefined, loc: Loc): void {
  if (!fernet) return;
  const open = new Opener(fernet);
  open.agent(diff, loc);
  open.done();
}

/**
 * An LLM sent to POST /api/profiles/{name}, /api/profiles/{name}/validate or a conversation's
 * switch_llm (1.58's decrypt_incoming_llm_secrets): a copy with its key fields' tokens opened.
 * Without a key nothing is opened (as 1.58).
 */
export function openLlm<T extends object>(llm: T, fernet: Fernet | undefined, loc: Loc): T {
  if (!fernet) return llm;
  const copy = structuredClone(llm);
  const open = new Opener(fernet);
  open.llm(copy, loc);
  open.done();
  return copy;
}

/** A body of POST/PATCH /api/settings/mcp/{key} (raw, in place): its tokens opened. */
export function openMcpServer(server: unknown, fernet: Fernet | undefined, loc: Loc): void {
  if (!fernet) return;
  const open = new Opener(fernet);
  open.server(server, loc);
  open.done();
}

/** The stored document with every secret field as a token (GET /api/settings, X-Expose-Secrets: encrypted). */
export function withSecretsEncrypted(doc: SettingsDoc, fernet: Fernet | undefined): SettingsDoc {
  if (!fernet) throw new Unavailable(NO_CIPHER);
  const copy = structuredClone(doc);
  for (const { path, value } of secretPaths(doc)) {
    let node = copy as unknown as Json;
    for (const p of path.slice(0, -1)) node = node[p] as Json;
    node[path.at(-1)!] = fernet.encrypt(value);
  }
  return copy;
}
