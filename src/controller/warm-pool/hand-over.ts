// The hand-over of a claimed warm-pool sandbox to its user: a new session key and the sandbox's
// first model token, so nothing the sandbox carried while it sat in the pool keeps working for it.
// Crash-safe in three steps, each repeatable:
//   1. the Secret gets the new key and token and keeps the pool's key as `pool-key` (pending);
//   2. the running agent server is told (POST /api/agentyard/hand-over, with the pool's key; a
//      second attempt after a crash finds it already switched and asks with the new key);
//   3. the Secret drops `pool-key` and records whom it was handed to.
// A runtime restart in between starts the agent server from the Secret, i.e. already handed over.
import { randomBytes } from 'node:crypto';
import { HAND_OVER_PATH } from '../../api/agent-server/hand-over.ts';
import { BadGateway, Conflict } from '../../api/errors.ts';
import { GROUP } from '../../api/meta.ts';
import { MODEL_TOKEN_KEY, newModelToken } from '../../api/model-gateway.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { SecretKind, type Secret } from '../../api/secret.ts';
import { AgentServerClient } from '../../runtime/agent-server-client.ts';
import { agentServerDialUrl } from '../../runtime/dial.ts';
import type { SandboxRuntime } from '../../runtime/types.ts';
import type { ResourceStore } from '../../store/types.ts';
import { decode, encode, sessionSecretName } from '../sandbox/session-secret.ts';

/** On the session Secret once handed over: the user it was handed to ('' for an owner-less conversation). */
export const ANNOTATION_HANDED_TO = `${GROUP}/handed-to`;
/** The pool's session key, kept while a hand-over is under way (the running agent server still accepts only it). */
const POOL_KEY = 'pool-key';

export function isHandedOver(secret: Secret | undefined, sb: Sandbox): boolean {
  return secret?.metadata.annotations?.[ANNOTATION_HANDED_TO] === (sb.spec.owner ?? '') && secret.data?.[POOL_KEY] === undefined;
}

export async function handOver(store: ResourceStore, runtime: Pick<SandboxRuntime, 'secretKeyFor'> | undefined, sb: Sandbox): Promise<void> {
  const namespace = sb.metadata.namespace ?? 'default';
  const name = sessionSecretName(sb.metadata.name);
  for (let attempt = 0; ; attempt++) {
    let secret = await store.get(SecretKind, namespace, name);
    if (!secret?.data?.key) throw new Error(`Sandbox ${sb.metadata.name} has no session key yet`);
    if (isHandedOver(secret, sb)) return;
    try {
      if (secret.data[POOL_KEY] === undefined) {
        const data = { ...secret.data, [POOL_KEY]: secret.data.key, key: encode(randomBytes(32).toString('base64url')), [MODEL_TOKEN_KEY]: encode(newModelToken(sb.metadata.name)) };
        secret = await store.update(SecretKind, { ...secret, data });
      }
      await tellAgentServer(sb, runtime, decode(secret.data![POOL_KEY])!, decode(secret.data!.key)!, decode(secret.data![MODEL_TOKEN_KEY])!);
      const { [POOL_KEY]: _done, ...data } = secret.data!;
      await store.update(SecretKind, { ...secret, metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, [ANNOTATION_HANDED_TO]: sb.spec.owner ?? '' } }, data });
      return;
    } catch (err) {
      // The Secret changed under us (the sandbox reconciler adding a token): read it again.
      if (!(err instanceof Conflict) || attempt >= 3) throw err;
    }
  }
}

async function tellAgentServer(sb: Sandbox, runtime: Pick<SandboxRuntime, 'secretKeyFor'> | undefined, poolKey: string, sessionKey: string, modelToken: string): Promise<void> {
  const url = agentServerDialUrl(sb);
  if (!url) throw new Error(`Sandbox ${sb.metadata.name} does not serve; its hand-over waits`);
  const body = { session_key: sessionKey, llm_api_key: modelToken, ...(runtime?.secretKeyFor ? { secret_key: runtime.secretKeyFor(sessionKey) } : {}) };
  const post = (key: string) => new AgentServerClient(url, key, { timeoutMs: 10_000 }).request('POST', HAND_OVER_PATH, { body });
  let res = await post(poolKey);
  // Switched already (an earlier attempt got through, or the agent server restarted with the new keys).
  if (res.status === 401) {
    await res.body?.cancel();
    res = await post(sessionKey);
  }
  await res.body?.cancel();
  if (!res.ok) throw new BadGateway(`The agent server of sandbox ${sb.metadata.name} answered ${res.status} to its hand-over`);
}
