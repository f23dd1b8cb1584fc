# One image for every agentyard process: `agentyard api`, `agentyard controller`, and
# `agentyard agent-server` inside each sandbox. Node 24 runs the TypeScript sources directly
# (native type stripping), so there is no build step, only production dependencies.
#   docker build -t <registry>/agentyard:<version> .
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS deps
# better-sqlite3 is native: a prebuilt binary is used when one matches, else it compiles.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# git and tar for the agent's tools and workspace archives; bash for the terminal tool; Debian's
# chromium (with a font, so pages render text) for the agent's browser tools, which drive it
# through playwright-core headless and without its own sandbox (the Pod is the sandbox).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git tar bash ca-certificates chromium fonts-liberation \
 && rm -rf /var/lib/apt/lists/*
# Where src/agent/tools/browser/session.ts finds the browser (also its default guess).
ENV AGENTYARD_CHROMIUM=/usr/bin/chromium
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
# Sandbox Pods run `agentyard agent-server ...` as their command.
RUN ln -s /app/bin/agentyard /usr/local/bin/agentyard
ENV NODE_ENV=production
# uid 1000 (the image's `node` user): sandbox Pods run as 1000 with runAsNonRoot. The chart's API and
# controller Pods pick uid 10001 (apart from the node's users); the image is readable by any uid.
USER 1000:1000
ENTRYPOINT ["/app/bin/agentyard"]
