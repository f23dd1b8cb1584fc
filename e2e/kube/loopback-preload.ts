// Loaded with `node --import` into `agentyard` processes the cluster suites start: there is no DNS
// for the test sandbox domain, so `<id>-runtime.<domain>` resolves to 127.0.0.1, where the host
// proxy (the test's ingress) listens; and `*.svc` (in-cluster Service names) connects to that
// proxy's port, which plays cluster DNS and kube-proxy.
import { routeTestHostsToLoopback } from './host-proxy.ts';

const domain = process.env.AGENTYARD_TEST_LOOPBACK_DOMAIN;
const servicePort = Number(process.env.AGENTYARD_TEST_SERVICE_PROXY_PORT) || undefined;
if (domain) routeTestHostsToLoopback(domain, servicePort);
