// Installation-wide settings of sandbox Pods, from the controller's environment (the chart sets it
// from values sandbox.resources and sandbox.imagePullSecrets):
//   AGENTYARD_SANDBOX_RESOURCES            JSON {requests: {cpu, memory}, limits: {cpu, memory}}
//   AGENTYARD_SANDBOX_IMAGE_PULL_SECRETS   comma-separated docker-registry Secret names (sandbox namespace)
//   AGENTYARD_IMAGE_PULL_POLICY            pull policy of the agentyard image (bundle init container, archive Pod)
//   AGENTYARD_SANDBOX_IMAGE_PULL_POLICY    pull policy of the sandbox image
// A Sandbox's own spec.resources (cpu, memory) replaces the default request and limit of that resource.

export type ResourceName = 'cpu' | 'memory' | 'ephemeral-storage';
export type ResourceList = Partial<Record<ResourceName, string>>;
export interface SandboxResources {
  requests?: ResourceList;
  limits?: ResourceList;
}

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';
const PULL_POLICIES: readonly PullPolicy[] = ['Always', 'IfNotPresent', 'Never'];

export interface SandboxPodSettings {
  resources?: SandboxResources;
  imagePullSecrets?: string[];
  /** Of the agentyard image (bundle init container, archive Pod); unset = Kubernetes' default. */
  imagePullPolicy?: PullPolicy;
  /** Of the sandbox image; unset = Kubernetes' default. */
  sandboxImagePullPolicy?: PullPolicy;
}

function pullPolicyFrom(env: NodeJS.ProcessEnv, name: string): PullPolicy | undefined {
  const v = env[name]?.trim();
  if (!v) return undefined;
  if (!PULL_POLICIES.includes(v as PullPolicy)) throw new Error(`${name} must be one of ${PULL_POLICIES.join(', ')}, got '${v}'`);
  return v as PullPolicy;
}

const NAMES: readonly ResourceName[] = ['cpu', 'memory', 'ephemeral-storage'];
/** Kubernetes quantities as people write them: 500m, 2, 1.5, 512Mi, 4Gi, 1e3. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?([eE][0-9]+|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const SECRET_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const UNITS: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/** A quantity's value as a number (for comparing a request with its limit). */
export function quantityValue(q: string): number {
  const m = /^([0-9.]+)(.*)$/.exec(q)!;
  const unit = m[2] ?? '';
  if (/^[eE]/.test(unit)) return Number(q);
  return Number(m[1]) * (UNITS[unit] ?? 1);
}

function resourceList(value: unknown, where: string): ResourceList {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`AGENTYARD_SANDBOX_RESOURCES: ${where} must be an object`);
  const out: ResourceList = {};
  for (const [k, v] of Object.entries(value)) {
    if (!NAMES.includes(k as ResourceName)) throw new Error(`AGENTYARD_SANDBOX_RESOURCES: ${where}.${k} is not one of ${NAMES.join(', ')}`);
    const q = typeof v === 'number' ? String(v) : v;
    if (typeof q !== 'string' || !QUANTITY.test(q)) throw new Error(`AGENTYARD_SANDBOX_RESOURCES: ${where}.${k} "${String(v)}" is not a Kubernetes quantity (e.g. 500m, 2, 512Mi, 4Gi)`);
    out[k as ResourceName] = q;
  }
  return out;
}

export function loadSandboxPodSettings(env: NodeJS.ProcessEnv): SandboxPodSettings {
  const out: SandboxPodSettings = {};
  const raw = env.AGENTYARD_SANDBOX_RESOURCES?.trim();
  if (raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new Error('AGENTYARD_SANDBOX_RESOURCES must be JSON, e.g. {"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"memory":"4Gi"}}');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('AGENTYARD_SANDBOX_RESOURCES must be a JSON object with requests and/or limits');
    const extra = Object.keys(parsed).filter((k) => k !== 'requests' && k !== 'limits');
    if (extra.length > 0) throw new Error(`AGENTYARD_SANDBOX_RESOURCES: unknown key ${extra.join(', ')} (only requests and limits)`);
    const p = parsed as { requests?: unknown; limits?: unknown };
    const requests = resourceList(p.requests, 'requests');
    const limits = resourceList(p.limits, 'limits');
    for (const name of NAMES) {
      const r = requests[name];
      const l = limits[name];
      if (r && l && quantityValue(r) > quantityValue(l)) throw new Error(`AGENTYARD_SANDBOX_RESOURCES: requests.${name} ${r} is more than limits.${name} ${l}; Kubernetes refuses such a Pod`);
    }
    out.resources = { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
  }
  const secrets = (env.AGENTYARD_SANDBOX_IMAGE_PULL_SECRETS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const s of secrets) if (!SECRET_NAME.test(s)) throw new Error(`AGENTYARD_SANDBOX_IMAGE_PULL_SECRETS: "${s}" is not a Secret name`);
  if (secrets.length > 0) out.imagePullSecrets = secrets;
  const own = pullPolicyFrom(env, 'AGENTYARD_IMAGE_PULL_POLICY');
  if (own) out.imagePullPolicy = own;
  const sandbox = pullPolicyFrom(env, 'AGENTYARD_SANDBOX_IMAGE_PULL_POLICY');
  if (sandbox) out.sandboxImagePullPolicy = sandbox;
  return out;
}

/** The sandbox container's resources: the installation defaults, a Sandbox's own cpu/memory replacing them. */
export function sandboxContainerResources(defaults: SandboxResources | undefined, own: { cpu?: string; memory?: string } | undefined): SandboxResources | undefined {
  const requests: ResourceList = { ...defaults?.requests };
  const limits: ResourceList = { ...defaults?.limits };
  for (const name of ['cpu', 'memory'] as const) {
    const v = own?.[name];
    if (v) {
      requests[name] = v;
      limits[name] = v;
    }
  }
  const out: SandboxResources = { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
  return Object.keys(out).length ? out : undefined;
}
