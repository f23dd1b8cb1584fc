# agentyard: `make run` starts it on one machine, `make test` runs every suite.
# Both install what they need first (npm ci, with Node 24 pinned as the npm package `node`).

SHELL := /bin/bash
NPM_STAMP := node_modules/.install-stamp

.PHONY: deps run test test-unit test-e2e test-kube k8s-bin test-deps typecheck crds gen bench clean

deps: $(NPM_STAMP)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

run: deps
	bin/agentyard up

# The Kubernetes suites (e2e/kube, e2e/helm) run against a real control plane whenever its
# binaries can be built; without them those suites are skipped, loudly.
test: deps k8s-bin test-deps
	npm test

test-unit: deps
	npm run test:unit

test-e2e: deps
	npm run test:e2e

typecheck: deps
	npm run typecheck

# Regenerates every file derived from the TypeBox schemas in src/api (CRDs, OpenAPI).
crds gen: deps
	npm run gen

# Real Kubernetes control plane for e2e/kube: kube-apiserver + kube-controller-manager (1.34, Go
# module proxy), etcd (Debian etcd-server) and helm v4, cached outside the clone in
# $${AGENTYARD_CACHE:-~/.cache/agentyard}/k8s/<version>/bin. The first build takes about 6 minutes.
k8s-bin:
	@hack/k8s-bin.sh || echo "WARNING: Kubernetes binaries could not be built; the Kubernetes suites will be skipped." >&2

# Chromium, PostgreSQL and git from Debian's packages when they are missing (hack/test-deps.sh).
test-deps:
	@hack/test-deps.sh || echo "WARNING: some system packages are missing; the suites that need them will be skipped." >&2

test-kube: deps k8s-bin
	npx vitest run --project e2e e2e/kube

bench: deps
	npm run bench

clean:
	rm -rf node_modules .data
