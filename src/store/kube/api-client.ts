// API clients that keep their connections. client-node's KubeConfig authenticates each request by
// building a new undici Agent for it (applySecurityAuthentication → createDispatcher, uncached), so
// every request opened its own TCP connection and TLS handshake, and left that socket open until
// the keep-alive timeout: measured on e2e/kube's API server, 300 sequential GETs opened 291
// connections, and a controller at 10,000 Sandboxes held hundreds of idle TLS sockets (its RSS
// and the API server's CPU went to handshakes). client-go shares one transport per config; this
// does the same: the credentials (headers, tokens) are still applied per request by the
// KubeConfig, but the first request's dispatcher carries every later one of the same KubeConfig.
import {
  createConfiguration,
  ServerConfiguration,
  setHeaderMiddleware,
  type Configuration,
  type KubeConfig,
  type RequestContext,
  type SecurityAuthentication,
} from '@kubernetes/client-node';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * One connection pool per KubeConfig. The TLS material (CA, client certificate) is taken from the
 * first request, as client-node itself does for watches (its agent cache keyed by cluster and
 * user); bearer tokens and exec credentials are headers, still refreshed on every request.
 */
class PooledAuthentication implements SecurityAuthentication {
  readonly #kc: KubeConfig;
  #dispatcher: Dispatcher | undefined;

  constructor(kc: KubeConfig) {
    this.#kc = kc;
  }

  getName(): string {
    return 'kubeconfig authentication, pooled connections';
  }

  async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await this.#kc.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    // undefined: plain HTTP without TLS options, where fetch's global pool already keeps connections.
    if (!fresh) return;
    if (this.#dispatcher) context.setDispatcher(this.#dispatcher);
    else this.#dispatcher = fresh;
  }
}

const configurations = new WeakMap<KubeConfig, Configuration>();

/** The configuration every API client made from `kc` by apiClient() shares (one pool). */
function configurationOf(kc: KubeConfig): Configuration {
  let config = configurations.get(kc);
  if (!config) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    config = createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: new PooledAuthentication(kc) }, middleware: [setHeaderMiddleware('User-Agent', 'agentyard')] });
    configurations.set(kc, config);
  }
  return config;
}

/** kc.makeApiClient(Api), with connections kept and shared between the clients of one KubeConfig. */
export function apiClient<T>(kc: KubeConfig, Api: new (config: Configuration) => T): T {
  return new Api(configurationOf(kc));
}
