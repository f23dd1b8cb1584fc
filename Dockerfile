# agentyard's image: `agentyard api` and `agentyard controller`, and the agent bundle at /agentyard
# that every sandbox Pod copies into its own image (src/runtime/kubernetes/bundle.ts). Node 24 runs
# the TypeScript sources directly (native type stripping): no build step, production dependencies
# only. It is also the default sandbox image (bash, git); the `browser` target adds chromium for the
# agent's browser tools:
#   docker build -t <registry>/agentyard:<version> .
#   docker build --target browser -t <registry>/agentyard:<version>-browser .
# When npm needs registry settings or a CA (a TLS-intercepting proxy), pass them as build secrets:
# files that exist for the one `npm ci` step and never in a layer:
#   --secret id=npmrc,src=<an npmrc> [--secret id=npm-ca,src=<CA bundle>]  (npmrc: cafile=/run/secrets/npm-ca)
ARG NODE_IMAGE=node:24-slim
# The runtime's base: any Debian. Node is not needed in it: the bundle brings its own.
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 ships prebuilt addons in its package (lib/binding.js loads them): no compiler, and
# no package's install script runs (npm would try node-gyp for it). Dropped: its sources and the
# addons of other platforms, and the type declarations and source maps nothing reads at run time.
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc --mount=type=secret,id=npm-ca \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src node_modules/better-sqlite3/build \
 && find node_modules/better-sqlite3/prebuilds -type f ! -name 'linux-*' -delete \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete

# The agent bundle: Node with its own loader and libraries, and the application.
FROM ${NODE_IMAGE} AS bundle
RUN apt-get update && apt-get install -y --no-install-recommends patchelf && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
RUN sh src/runtime/kubernetes/agent-bundle.sh "$(command -v node)" /agentyard /src

# Shared by both targets: git and tar for the agent's tools and workspace archives, bash for its
# terminal, CA certificates for git over https. No compiler, no npm, no Node besides the bundle's.
FROM ${BASE_IMAGE} AS base
# No manuals, documentation or translations from the packages installed here (copyrights kept).
RUN printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
      'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' \
      >/etc/dpkg/dpkg.cfg.d/agentyard-slim \
 && apt-get update \
 && apt-get install -y --no-install-recommends git tar bash ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb
COPY --from=bundle /agentyard /agentyard
# `agentyard` and `node` on the PATH, for people who exec into a Pod.
RUN ln -s /agentyard/bin/node /usr/local/bin/node && ln -s /agentyard/app/bin/agentyard /usr/local/bin/agentyard
ENV NODE_ENV=production
# uid 1000: sandbox Pods run as 1000 with runAsNonRoot and a read-only root filesystem. The chart's
# API and controller Pods pick uid 10001 (apart from the node's users); the image is readable by any uid.
USER 1000:1000
ENTRYPOINT ["/agentyard/bin/node", "/agentyard/app/src/cli/main.ts"]

# A sandbox image for the agent's browser tools: Debian's chromium (with a font, so pages render
# text), driven through playwright-core headless and without its own sandbox (the Pod is the
# sandbox). Use it as sandbox.image, or start from it for your own toolchain.
FROM base AS browser
USER 0:0
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb
# Where src/agent/tools/browser/session.ts finds the browser (also its default guess).
ENV AGENTYARD_CHROMIUM=/usr/bin/chromium
USER 1000:1000

# The default target: the control plane and the default sandbox image, without a browser.
FROM base AS runtime
