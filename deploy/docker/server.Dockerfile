# syntax=docker/dockerfile:1
# The KernelSeek server: `kernelseek serve` (the Slack app, the agent workers, the digest scheduler).
# Build from the repository root:  docker build -f deploy/docker/server.Dockerfile -t kernelseek-server .
# docs/deploy.md has the settings; deploy/compose.yaml runs it beside PostgreSQL and Redis.

# --- build: npm ci compiles src/ to dist/ (package.json's prepare), then the dev tools go ---
FROM node:20.19.5-bookworm-slim AS build
WORKDIR /opt/kernelseek
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund --loglevel=error \
 && npm prune --omit=dev --no-audit --no-fund

# --- runtime ---
FROM node:20.19.5-bookworm-slim
# bubblewrap and util-linux (prlimit): the sandbox of the agent's commands; git: every run's
# workspace is a repository; g++, make and python3: what the agent's own commands may build with.
# tini reaps the sandboxes' processes and passes SIGTERM on, so serve shuts down gracefully.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap util-linux git ca-certificates tini g++ make python3 \
 && rm -rf /var/lib/apt/lists/*
# A user of its own: the service never runs as root in the image (sandboxes then run as an
# unprivileged uid inside their user namespace; docs/deploy.md, "Which user").
RUN groupadd --system --gid 10001 kernelseek \
 && useradd --system --uid 10001 --gid kernelseek --home-dir /var/lib/kernelseek --create-home --shell /usr/sbin/nologin kernelseek
WORKDIR /opt/kernelseek
COPY --from=build /opt/kernelseek/node_modules ./node_modules
COPY --from=build /opt/kernelseek/dist ./dist
# The whole harness/ travels: its files make the harness version that workers must match.
COPY package.json ./
COPY bin ./bin
COPY harness ./harness
COPY kernels ./kernels
COPY questions ./questions
COPY migrations ./migrations
COPY slack ./slack
ENV NODE_ENV=production \
    KERNELSEEK_DATA_DIR=/var/lib/kernelseek \
    PORT=3000
USER kernelseek
VOLUME ["/var/lib/kernelseek"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/opt/kernelseek/bin/kernelseek.js"]
CMD ["serve"]
