# syntax=docker/dockerfile:1
# The gateway as one image: docs/deploy.md (single node, several nodes, upgrades, backups).
#
#   docker build -t ai-gateway .
#   docker run -p 3000:3000 -v gateway-data:/app/data -e SESSION_SECRET=… ai-gateway
#
# Three stages: `build` compiles the console and the server bundle (dev dependencies), `deps`
# installs the server's production dependencies alone (native parts built for this platform),
# and the runtime image gets node, the bundle, the console and those dependencies: no sources,
# no dev dependencies, no compiler. Both stages that compile share NODE_VERSION with the runtime
# (better-sqlite3 is built against that Node).
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /app
COPY . .
# `npm install` builds the console too (postinstall); `npm run build` builds it and bundles the server.
RUN --mount=type=cache,target=/root/.npm npm install --no-audit --no-fund && npm run build

FROM node:${NODE_VERSION}-bookworm AS deps
WORKDIR /app
# The workspace manifests npm needs to read the lockfile; only the server's dependencies are installed.
COPY package.json package-lock.json ./
COPY server/package.json server/
COPY admin/package.json admin/
COPY bench/package.json bench/
COPY server/native/addon server/native/addon
# Scripts off during the install (the root's postinstall would build the console), then only the
# two native packages are built. The addon is optional: without a compiler (another base image)
# it is skipped and the gateway runs without it, as with GATEWAY_NATIVE=off.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --workspace server --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 \
 && if command -v make >/dev/null && command -v g++ >/dev/null && npm rebuild @gateway/native; then \
      rm -rf server/native/addon/build/Release/obj.target server/native/addon/build/Release/.deps; \
    else \
      rm -rf server/native/addon/build; echo "native addon not built: the gateway runs without it"; \
    fi

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000
WORKDIR /app
# Owned by root: the gateway's user can read its code, not change it. Only data/ (the default
# SQLite database) is its own.
COPY --from=deps /app/node_modules node_modules
COPY --from=deps /app/server/native/addon server/native/addon
COPY --from=build /app/server/dist server/dist
COPY --from=build /app/admin/dist admin/dist
COPY package.json ./
RUN mkdir data && chown node:node data
USER node
EXPOSE 3000
# Liveness: the process serves. Readiness (/readyz) is for the load balancer: docs/deploy.md.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The root package.json's `start` without its prestart (the bundle is built above): same node flags.
CMD ["node", "--enable-source-maps", "--expose-gc", "--max-semi-space-size=8", "--heap-growing-percent=60", "server/dist/index.cjs"]
