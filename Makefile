# agentyard: `make run` starts it on one machine, `make test` runs every suite.
# Both install what they need first (npm ci, with Node 24 pinned as the npm package `node`).

SHELL := /bin/bash
NPM_STAMP := node_modules/.install-stamp

.PHONY: deps run test test-unit test-e2e test-kube test-node k8s-bin k8s-node kube-score keycloak test-deps typecheck crds gen bench clean

deps: $(NPM_STAMP)

# npm itself runs on whatever Node is on the PATH (often an older system one) while it installs
# for the pinned Node 24, so it would print a screen of EBADENGINE warnings that mean nothing here:
# only errors are shown, after one line saying what is going on.
$(NPM_STAMP): package.json package-lock.json
	@echo "Installing dependencies (npm ci, with Node 24 as the npm package 'node')..."
	@npm ci --no-audit --no-fund --loglevel=error
	@touch $@

run: deps
	bin/agentyard up

# The cluster suites (e2e/kube, e2e/helm) and the PostgreSQL suites need programs npm cannot
# install. With Go on the PATH they are required: a failed k8s-bin fails `make test`, and
# AGENTYARD_REQUIRE_CLUSTER_TESTS=1 makes a suite whose program is missing fail instead of skip.
# Without Go they are skipped, with a warning. Set AGENTYARD_REQUIRE_CLUSTER_TESTS=1 (CI) or =0 to
# decide yourself.
HAVE_GO := $(shell command -v go 2>/dev/null)
REQUIRE_CLUSTER_TESTS := $(or $(AGENTYARD_REQUIRE_CLUSTER_TESTS),$(if $(HAVE_GO),1,0))
test test-e2e test-kube test-node: export AGENTYARD_REQUIRE_CLUSTER_TESTS := $(REQUIRE_CLUSTER_TESTS)

test: deps k8s-bin kube-score oci-registry keycloak seaweedfs gitea openhands-app-server test-deps k8s-node
	npm test

test-unit: deps
	npm run test:unit

test-e2e: deps k8s-bin kube-score oci-registry keycloak seaweedfs gitea openhands-app-server test-deps k8s-node
	npm run test:e2e

typecheck: deps
	npm run typecheck

# Regenerates every file derived from the TypeBox schemas in src/api (CRDs, OpenAPI).
crds gen: deps
	npm run gen

# Real Kubernetes control plane for e2e/kube and e2e/helm: kube-apiserver, kube-controller-manager
# and kubectl (1.34, Go module proxy), etcd (Debian etcd-server), helm v4 and helm v3 (as helm3,
# for the Helm < 4 refusal test), cached outside the clone in
# $${AGENTYARD_CACHE:-~/.cache/agentyard}/k8s/<version>/bin. The first build takes about 6 minutes.
# Strict unless the cluster suites are not required (no Go): then a loud warning and they skip.
k8s-bin:
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@hack/k8s-bin.sh
else
	@hack/k8s-bin.sh || { echo; \
	  echo "WARNING: no Kubernetes binaries (hack/k8s-bin.sh failed, see above): e2e/kube, e2e/helm and"; \
	  echo "WARNING: the Helm chart checks are SKIPPED. Install Go >= 1.25 and run make test again."; echo; } >&2
endif

# A REAL single-node cluster for e2e/node (hack/k8s-node.sh): kubelet, kube-scheduler and kube-proxy
# (beside kube-apiserver), CoreDNS, crictl, kube-router (NetworkPolicy), local-path-provisioner and
# Traefik from Go modules, and the images (pause, a debootstrapped Debian, Node 24 from npm, and
# agentyard from this Dockerfile) built with buildah, cached in $${AGENTYARD_CACHE:-~/.cache/agentyard}/node.
# Needs root and Debian's containerd & co. (test-deps). The first build takes about 20 minutes.
# Strict like k8s-bin. The agentyard image of this checkout (rebuilt whenever the source changed,
# 1 to 2 minutes) is left to the e2e/node suites, which build it when they start (`hack/k8s-node.sh
# image`, under the same lock) while the other suites already run.
k8s-node: deps k8s-bin test-deps
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@hack/k8s-node.sh base
else
	@hack/k8s-node.sh base || { echo; \
	  echo "WARNING: no real test node (hack/k8s-node.sh failed, see above): e2e/node is SKIPPED."; \
	  echo "WARNING: Install Go >= 1.25, run as root, and run make test again."; echo; } >&2
endif

test-node: deps k8s-node
	npx vitest run --project e2e e2e/node

# kube-score (Go module proxy), the outside best-practice check of the rendered chart
# (e2e/helm/kube-score.test.ts), cached in $${AGENTYARD_CACHE:-~/.cache/agentyard}/kube-score/<version>.
# Strict like k8s-bin when the cluster suites are required.
kube-score:
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@hack/kube-score.sh >/dev/null
else
	@hack/kube-score.sh >/dev/null || echo "WARNING: no kube-score (hack/kube-score.sh failed, see above): the chart's kube-score check is SKIPPED." >&2
endif

# Keycloak (org.keycloak:keycloak-quarkus-dist from Maven Central, with Maven; run on a JDK >= 21
# under /usr/lib/jvm), the real OpenID provider of the login suite (e2e/login), cached in
# $${AGENTYARD_CACHE:-~/.cache/agentyard}/keycloak/<version>. Strict like k8s-bin.
keycloak:
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@hack/keycloak.sh >/dev/null
else
	@hack/keycloak.sh >/dev/null || echo "WARNING: no Keycloak (hack/keycloak.sh failed, see above): the OIDC login suite e2e/login is SKIPPED." >&2
endif

# Chromium, PostgreSQL and git from Debian's packages when they are missing (hack/test-deps.sh), and
# the real OpenHands agent server in a cached virtualenv for e2e/parity (hack/openhands-server.sh),
# the Qwen3 chat template its critic flows seed the real server's cache with (hack/qwen3-chat-template.sh),
# and a real ACP agent (opencode, from npm) for the ACP suites (hack/acp-agent.sh).
# A warning only: a suite whose program is missing skips, or fails when the cluster suites are required.
test-deps:
	@hack/test-deps.sh || echo "WARNING: some system packages are missing; the suites that need them will skip (or fail under AGENTYARD_REQUIRE_CLUSTER_TESTS=1)." >&2
	@hack/openhands-server.sh >/dev/null || echo "WARNING: no OpenHands agent server (hack/openhands-server.sh failed, see above): the differential suite e2e/parity will skip (or fail under AGENTYARD_REQUIRE_CLUSTER_TESTS=1)." >&2
	@hack/qwen3-chat-template.sh >/dev/null || echo "WARNING: no Qwen3 chat template (hack/qwen3-chat-template.sh failed, see above): the critic flows of e2e/parity will fail (or skip, without the OpenHands server)." >&2
	@hack/acp-agent.sh >/dev/null || echo "WARNING: no ACP agent (hack/acp-agent.sh failed, see above): the ACP suites (src/agent-server/acp, the ACP flows of e2e/parity) will skip (or fail under AGENTYARD_REQUIRE_CLUSTER_TESTS=1)." >&2

test-kube: deps k8s-bin kube-score
	npx vitest run --project e2e-paired e2e/kube e2e/helm

bench: deps
	npm run bench

clean:
	rm -rf node_modules .data

.PHONY: oci-registry chart-publish seaweedfs openhands-app-server

# The real OpenHands app server (PyPI openhands-ai, patched to run here) in a cached virtualenv for the
# side-by-side suite e2e/app-parity (hack/openhands-app-server.sh; about 7 minutes the first time);
# strict like k8s-bin when the cluster suites are required.
openhands-app-server:
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@hack/openhands-app-server.sh >/dev/null
else
	@hack/openhands-app-server.sh >/dev/null || echo "WARNING: no OpenHands app server (hack/openhands-app-server.sh failed, see above): the side-by-side suite e2e/app-parity is SKIPPED." >&2
endif

# SeaweedFS (Go module proxy), the real S3 server of the object-store tests
# (src/objstore/s3-store.test.ts), cached in $${AGENTYARD_CACHE:-~/.cache/agentyard}/seaweedfs/<version>.
# The first build (a large module: ~1,480 packages) costs ~475 s of CPU, measured fresh (empty module
# and build caches): about 5 minutes on 2 idle cores, 32 minutes on 2 cores shared at load 20-26.
# Runs under nice.
# Strict like k8s-bin when the cluster suites are required.
seaweedfs:
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@nice hack/seaweedfs.sh >/dev/null
else
	@nice hack/seaweedfs.sh >/dev/null || echo "WARNING: no SeaweedFS (hack/seaweedfs.sh failed, see above): the S3 object-store tests are SKIPPED." >&2
endif

# Gitea (Go module proxy, cgo SQLite), the real forgejo-API git host behind the app API's git searches
# (src/testing/gitea, src/facade/git-providers/forgejo.test.ts, e2e/app-parity), cached in
# $${AGENTYARD_CACHE:-~/.cache/agentyard}/gitea/<version> with its source (templates, locales) beside it.
# The first build costs ~6 minutes of CPU (31 minutes on 2 cores shared at load 15-19). Runs under nice. Strict like k8s-bin when the cluster suites are required.
.PHONY: gitea
gitea:
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@nice hack/gitea.sh >/dev/null
else
	@nice hack/gitea.sh >/dev/null || echo "WARNING: no Gitea (hack/gitea.sh failed, see above): the forgejo git-search tests are SKIPPED." >&2
endif

# Chart distribution. The CNCF Distribution registry (Go module proxy) for the licensed-pull tests
# (e2e/helm/registry.test.ts), cached in $${AGENTYARD_CACHE:-~/.cache/agentyard}/registry/<version>;
# strict like k8s-bin when the cluster suites are required.
oci-registry:
ifeq ($(REQUIRE_CLUSTER_TESTS),1)
	@hack/oci-registry.sh >/dev/null
else
	@hack/oci-registry.sh >/dev/null || echo "WARNING: no OCI registry (hack/oci-registry.sh failed, see above): the licensed chart pull test is SKIPPED." >&2
endif

# `make chart-publish CHART_OCI=oci://registry.example.com/charts` packages charts/agentyard and
# pushes it as an OCI artifact (log in first: helm registry login registry.example.com).
# HELM defaults to helm on the PATH, else the one hack/k8s-bin.sh caches; HELM_PUSH_FLAGS passes
# e.g. --plain-http (a loopback registry) or --ca-file.
CHART_OCI ?=
CHART_DIST ?= $(CURDIR)/.scratch/chart-dist
HELM ?= $(or $(shell command -v helm 2>/dev/null),$(shell hack/k8s-bin.sh 2>/dev/null | tail -1)/helm)
HELM_PUSH_FLAGS ?=
chart-publish:
	@test -n "$(CHART_OCI)" || { echo "chart-publish: set CHART_OCI, e.g. make chart-publish CHART_OCI=oci://registry.example.com/charts" >&2; exit 2; }
	@mkdir -p "$(CHART_DIST)"
	@pkg=$$("$(HELM)" package charts/agentyard -d "$(CHART_DIST)" | sed -n 's/^Successfully packaged chart and saved it to: //p'); \
	  test -n "$$pkg" || { echo "chart-publish: helm package failed" >&2; exit 1; }; \
	  "$(HELM)" push "$$pkg" "$(CHART_OCI)" $(HELM_PUSH_FLAGS)
