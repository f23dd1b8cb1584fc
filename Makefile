# agentyard: `make run` starts it on one machine, `make test` runs every suite.
# Both install what they need first (npm ci, with Node 24 pinned as the npm package `node`).

SHELL := /bin/bash
NPM_STAMP := node_modules/.install-stamp

.PHONY: deps run test test-unit test-e2e typecheck crds gen verify-gen bench clean

deps: $(NPM_STAMP)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

run: deps
	bin/agentyard up

test: deps
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

bench: deps
	npm run bench

clean:
	rm -rf node_modules .data
