// ResourceStore on a real API server: agentyard kinds through CustomObjectsApi, Secrets through
// CoreV1Api. Semantics come from the server itself (resourceVersion preconditions, generation,
// the status subresource, finalizers); this class only maps shapes and errors.
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Secret,
} from '@kubernetes/client-node';
import { BadRequest, Conflict } from '../../api/errors.ts';
import type { KubeObject, ResourceKind } from '../../api/meta.ts';
import { createLogger, type Logger } from '../../util/log.ts';
import type { ListOptions, ListResult, ResourceStore, WatchEvent, WatchOptions } from '../types.ts';
import { parseLabelSelector } from '../label-selector.ts';
import { apiClient } from './api-client.ts';
import { fromKube } from './errors.ts';
import { collectionPath, forCreate, forUpdate, fromServer, targetOf, type KindTarget } from './objects.ts';
import { validateObject } from './validate.ts';
import { WatchStream } from './watch-stream.ts';

export interface KubeStoreOptions {
  /** Written into managedFields and required by server-side apply. */
  fieldManager?: string;
  /**
   * Server-side limit on each watch request; the stream reconnects from the last
   * resourceVersion when it ends. Default: the server's own (30-60 min).
   */
  watchTimeoutSeconds?: number;
  /**
   * Objects per list request: a list is read in pages of this many (limit + continue), as
   * client-go's reflector does, so that 10,000 Sandboxes are not one response the API server must
   * build, and this process buffer, at once. Default 500.
   */
  listPageSize?: number;
  log?: Logger;
}

type ListBody = { items?: unknown[]; metadata?: { resourceVersion?: string; continue?: string } };

const DEFAULT_LIST_PAGE_SIZE = 500;

export class KubeStore implements ResourceStore {
  readonly #kc: KubeConfig;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;
  readonly #fieldManager: string;
  readonly #log: Logger;
  readonly #watchTimeoutSeconds: number | undefined;
  readonly #listPageSize: number;

  constructor(kubeConfig: KubeConfig, opts: KubeStoreOptions = {}) {
    this.#kc = kubeConfig;
    this.#custom = apiClient(kubeConfig, CustomObjectsApi);
    this.#core = apiClient(kubeConfig, CoreV1Api);
    this.#fieldManager = opts.fieldManager ?? 'agentyard';
    this.#log = opts.log ?? createLogger('kube-store');
    this.#watchTimeoutSeconds = opts.watchTimeoutSeconds;
    this.#listPageSize = opts.listPageSize ?? DEFAULT_LIST_PAGE_SIZE;
  }

  async get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string): Promise<T | undefined> {
    const t = targetOf(kind);
    try {
      const raw = isCore(t)
        ? await this.#core.readNamespacedSecret({ namespace, name })
        : await this.#custom.getNamespacedCustomObject({ ...crd(t), namespace, name });
      return fromServer(kind, raw);
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw fromKube(err, `get ${kind.kind} ${namespace}/${name}`);
    }
  }

  async list<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts: ListOptions = {}): Promise<ListResult<T>> {
    // Pages of one consistent snapshot: every page after the first continues the first one's, and
    // the snapshot's resourceVersion is the list's (a watch from it misses nothing).
    const items: T[] = [];
    let first: ListBody | undefined;
    let token: string | undefined;
    do {
      const page = await this.#list(kind, namespace, opts.labelSelector, this.#listPageSize, token);
      first ??= page;
      for (const raw of page.items ?? []) items.push(fromServer(kind, raw));
      token = page.metadata?.continue || undefined;
    } while (token);
    return { items, resourceVersion: first.metadata?.resourceVersion ?? '' };
  }

  async create<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    const t = targetOf(kind);
    const body = forCreate(kind, obj);
    const namespace = namespaceOf(body);
    validateObject(kind, body);
    const fieldManager = this.#fieldManager;
    try {
      const raw = isCore(t)
        ? await this.#core.createNamespacedSecret({ namespace, body: body as unknown as V1Secret, fieldManager })
        : await this.#custom.createNamespacedCustomObject({ ...crd(t), namespace, body, fieldManager });
      return fromServer(kind, raw);
    } catch (err) {
      throw fromKube(err, `create ${kind.kind} ${namespace}/${obj.metadata.name}`);
    }
  }

  async update<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    const t = targetOf(kind);
    const { namespace, name } = this.#identify(kind, obj);
    const body = forUpdate(kind, obj);
    validateObject(kind, body);
    const fieldManager = this.#fieldManager;
    try {
      const raw = isCore(t)
        ? await this.#core.replaceNamespacedSecret({ namespace, name, body: body as unknown as V1Secret, fieldManager })
        : await this.#custom.replaceNamespacedCustomObject({ ...crd(t), namespace, name, body, fieldManager });
      return fromServer(kind, raw);
    } catch (err) {
      throw fromKube(err, `update ${kind.kind} ${namespace}/${name}`);
    }
  }

  async updateStatus<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    const t = targetOf(kind);
    if (!kind.hasStatus || isCore(t)) throw new BadRequest(`${kind.kind} has no status subresource`);
    const { namespace, name } = this.#identify(kind, obj);
    const body = forUpdate(kind, obj);
    validateObject(kind, body);
    try {
      const raw = await this.#custom.replaceNamespacedCustomObjectStatus({
        ...crd(t),
        namespace,
        name,
        body,
        fieldManager: this.#fieldManager,
      });
      return fromServer(kind, raw);
    } catch (err) {
      throw fromKube(err, `update status of ${kind.kind} ${namespace}/${name}`);
    }
  }

  async delete<T extends KubeObject>(
    kind: ResourceKind<T>,
    namespace: string,
    name: string,
    opts: { resourceVersion?: string } = {},
  ): Promise<void> {
    const t = targetOf(kind);
    // Background: the owner goes now and the garbage collector removes dependents after it,
    // which is what SqliteStore does too; foreground would add a finalizer callers never asked for.
    const body = {
      propagationPolicy: 'Background',
      ...(opts.resourceVersion ? { preconditions: { resourceVersion: opts.resourceVersion } } : {}),
    };
    try {
      if (isCore(t)) await this.#core.deleteNamespacedSecret({ namespace, name, body });
      else await this.#custom.deleteNamespacedCustomObject({ ...crd(t), namespace, name, body });
    } catch (err) {
      throw fromKube(err, `delete ${kind.kind} ${namespace}/${name}`);
    }
  }

  watch<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    const t = targetOf(kind);
    // "After now" needs a resourceVersion; a one-item list gives the current one cheaply. Errors
    // (a bad selector included) surface from the first next(), as with any async iterator.
    const startFrom = (async () => {
      if (opts.labelSelector) parseLabelSelector(opts.labelSelector);
      if (opts.resourceVersion) return opts.resourceVersion;
      return (await this.#list(kind, namespace, opts.labelSelector, 1)).metadata?.resourceVersion ?? '';
    })();
    return new WatchStream<T>({
      kubeConfig: this.#kc,
      path: collectionPath(t, namespace),
      ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
      startFrom,
      toObject: (raw) => fromServer(kind, raw),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(this.#watchTimeoutSeconds ? { timeoutSeconds: this.#watchTimeoutSeconds } : {}),
      log: this.#log,
    });
  }

  /**
   * JSON merge patch, with the content type set explicitly: client-node's custom-object patch
   * methods otherwise send application/json-patch+json, which would reject a merge document.
   * A `metadata.resourceVersion` in the patch makes it conditional (409 → Conflict).
   */
  async mergePatch<T extends KubeObject>(
    kind: ResourceKind<T>,
    namespace: string,
    name: string,
    patch: Record<string, unknown>,
    opts: { subresource?: 'status' } = {},
  ): Promise<T> {
    const t = targetOf(kind);
    const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const fieldManager = this.#fieldManager;
    try {
      let raw: unknown;
      if (isCore(t)) {
        if (opts.subresource) throw new BadRequest(`${kind.kind} has no status subresource`);
        raw = await this.#core.patchNamespacedSecret({ namespace, name, body: patch, fieldManager }, options);
      } else if (opts.subresource === 'status') {
        raw = await this.#custom.patchNamespacedCustomObjectStatus({ ...crd(t), namespace, name, body: patch, fieldManager }, options);
      } else {
        raw = await this.#custom.patchNamespacedCustomObject({ ...crd(t), namespace, name, body: patch, fieldManager }, options);
      }
      return fromServer(kind, raw);
    } catch (err) {
      throw fromKube(err, `patch ${kind.kind} ${namespace}/${name}`);
    }
  }

  async #list(kind: ResourceKind, namespace: string | undefined, labelSelector: string | undefined, limit?: number, continueToken?: string): Promise<ListBody> {
    const t = targetOf(kind);
    // The server answers a bad selector with a bare 400; parse it here for the same Invalid as SqliteStore.
    if (labelSelector) parseLabelSelector(labelSelector);
    const q = { ...(labelSelector ? { labelSelector } : {}), ...(limit ? { limit } : {}), ...(continueToken ? { _continue: continueToken } : {}) };
    try {
      if (isCore(t)) {
        return namespace === undefined
          ? await this.#core.listSecretForAllNamespaces(q)
          : await this.#core.listNamespacedSecret({ namespace, ...q });
      }
      return (namespace === undefined
        ? await this.#custom.listCustomObjectForAllNamespaces({ group: t.group, version: t.version, resourcePlural: t.plural, ...q })
        : await this.#custom.listNamespacedCustomObject({ ...crd(t), namespace, ...q })) as ListBody;
    } catch (err) {
      throw fromKube(err, `list ${kind.kind}`);
    }
  }

  #identify(kind: ResourceKind, obj: KubeObject): { namespace: string; name: string } {
    // The server would accept a PUT without resourceVersion as an unconditional write; the
    // contract requires optimistic concurrency, so refuse it here.
    if (!obj.metadata.resourceVersion) {
      throw new Conflict(`${kind.kind} ${obj.metadata.name}: metadata.resourceVersion is required for an update`);
    }
    return { namespace: namespaceOf(obj), name: obj.metadata.name };
  }
}

function isCore(t: KindTarget): boolean {
  return t.group === '';
}

function crd(t: KindTarget): { group: string; version: string; plural: string } {
  return { group: t.group, version: t.version, plural: t.plural };
}

function namespaceOf(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  if (!ns) throw new BadRequest(`${obj.kind} ${obj.metadata.name}: metadata.namespace is required`);
  return ns;
}

