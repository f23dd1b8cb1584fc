# One image for every agentyard process: `api`, `controller` and `agent-server`.
# Node 24 runs the TypeScript sources directly (type stripping): no build step.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
# git and tar for the agent's tools and workspace archives; bash for the terminal tool.
RUN apt-get update && apt-get install -y --no-install-recommends git tar bash ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
RUN ln -s /app/bin/agentyard /usr/local/bin/agentyard
USER 1000:1000
ENTRYPOINT ["/app/bin/agentyard"]
