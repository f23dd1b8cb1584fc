// Loaded with `node --import` into `agentyard` processes the cluster suites start: there is no DNS
// for the test sandbox domain, so `<id>-runtime.<domain>` resolves to 127.0.0.1, where the host
// proxy (the test's ingress) listens.
import { routeTestHostsToLoopback } from './host-proxy.ts';

const domain = process.env.AGENTYARD_TEST_LOOPBACK_DOMAIN;
if (domain) routeTestHostsToLoopback(domain);
