# syntax=docker/dockerfile:1
# Two images. The default target: every service, the OPA sidecar and the migrate Job (k8s/). The `dashboards-runtime`
# target: the dashboards runtime and its sandbox pods only, so a compromise of the launcher's image holds no
# service's code (dashboards-runtime/image-files.txt lists its files; scripts/check-runtime-image.mjs proves the list
# and prints the size). Both run the TypeScript with tsx, as `npm start` and the tests do (dt-sql-parser's ESM build
# needs tsx or a bundler, so compiled JavaScript under plain Node is not an option); the build type-checks first, so
# a type error fails either image.
#   docker build -t registry.example.com/svc:0.1.0 .
#   docker build --target dashboards-runtime -t registry.example.com/svc-dashboards-runtime:0.1.0 .
#   docker run --rm -p 8080-8081:8080-8081 -p 5000:5000 -p 8090:8090 registry.example.com/svc:0.1.0   # svc dev
ARG NODE_IMAGE=node:24-bookworm-slim
ARG GO_IMAGE=golang:1.26-bookworm

# opa, pinned as in scripts/env.sh, built with `go install` like scripts/install-opa.sh (Go 1.26, as CI here).
FROM ${GO_IMAGE} AS opa
ARG OPA_VERSION=v1.22.2
RUN CGO_ENABLED=0 GOBIN=/out go install "github.com/open-policy-agent/opa@${OPA_VERSION}"

# The policies: the wasm bundle the services load in-process (must equal the committed policies/build, which is
# byte-for-byte reproducible with this opa) and the Rego bundle the OPA sidecar serves (k8s/components/opa-sidecar).
FROM ${NODE_IMAGE} AS policies
COPY --from=opa /out/opa /usr/local/bin/opa
WORKDIR /src
COPY scripts/env.sh scripts/build-policies.sh scripts/
COPY policies policies
RUN bash scripts/build-policies.sh /out/build \
 && cmp /out/build/policy.wasm policies/build/policy.wasm && cmp /out/build/data.json policies/build/data.json \
 && opa build -b policies --ignore build --ignore cases.json --ignore '*_test.rego' -o /out/bundle.tar.gz

# Type-check with the development dependencies.
FROM ${NODE_IMAGE} AS check
WORKDIR /app
COPY package.json package-lock.json ./
COPY dashboards-runtime/package.json dashboards-runtime/
COPY src/platform/package.json src/platform/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.web.json ./
COPY src src
COPY dashboards-runtime dashboards-runtime
RUN npm run --silent typecheck

# Production dependencies only (tsx is one: it runs the services).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY dashboards-runtime/package.json dashboards-runtime/
COPY src/platform/package.json src/platform/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The runtime's production dependencies: its workspace's and @svc/platform's, nothing of the services'.
FROM ${NODE_IMAGE} AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY dashboards-runtime/package.json dashboards-runtime/
COPY src/platform/package.json src/platform/
RUN npm ci --omit=dev -w dashboards-runtime --no-audit --no-fund && npm cache clean --force

# The runtime's files: its transitive closure and nothing else of src/platform (no database port, no gateway).
FROM ${NODE_IMAGE} AS runtime-files
WORKDIR /src
COPY dashboards-runtime dashboards-runtime
COPY src/platform src/platform
RUN mkdir /out && tar -cf - -T dashboards-runtime/image-files.txt | tar -xf - -C /out

# `--target dashboards-runtime`: the runtime's own launcher (dashboards-runtime/src/main.ts), which opens no database.
# Its sandbox pods run pod-sandbox.mjs from this image too (the runtime gives them its own image).
FROM ${NODE_IMAGE} AS dashboards-runtime
ENV NODE_ENV=production SVC_DATA_DIR=/var/lib/svc/data
RUN groupadd --system --gid 10001 svc \
 && useradd --system --uid 10001 --gid svc --home-dir /var/lib/svc --shell /usr/sbin/nologin svc \
 && mkdir -p /var/lib/svc/data /var/lib/svc/dashboards && chown -R svc:svc /var/lib/svc
WORKDIR /app
COPY --from=runtime-deps /app/node_modules node_modules
COPY --from=runtime-files /out/ ./
COPY tsconfig.json ./
COPY --from=policies /out/build policies/build
COPY --from=check /app/tsconfig.json /tmp/typechecked
RUN rm /tmp/typechecked
USER 10001:10001
EXPOSE 8090
ENTRYPOINT ["node", "--import", "tsx", "/app/dashboards-runtime/src/main.ts"]

# The default target: every service (and `svc dev`, which starts the runtime with them).
FROM ${NODE_IMAGE} AS services
ENV NODE_ENV=production SVC_DATA_DIR=/var/lib/svc/data
# uid and gid 10001: the manifests' runAsUser and runAsGroup, and the sandbox pods'.
RUN groupadd --system --gid 10001 svc \
 && useradd --system --uid 10001 --gid svc --home-dir /var/lib/svc --shell /usr/sbin/nologin svc \
 && mkdir -p /var/lib/svc/data /var/lib/svc/dashboards && chown -R svc:svc /var/lib/svc
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY package.json tsconfig.json ./
COPY bin bin
COPY src src
COPY dashboards-runtime/package.json dashboards-runtime/
COPY dashboards-runtime/src dashboards-runtime/src
COPY --from=policies /out/build policies/build
COPY --from=policies /out/bundle.tar.gz policies/bundle.tar.gz
COPY --from=opa /out/opa /usr/local/bin/opa
# The check stage must have passed for the image to build.
COPY --from=check /app/tsconfig.json /tmp/typechecked
RUN ln -s /app/bin/svc /usr/local/bin/svc && rm /tmp/typechecked
USER 10001:10001
EXPOSE 8080 8081 5000 8090
# `svc <command>`: the manifests pass `serve <service>`; the migrate Job runs `svc db migrate && svc tracker db upgrade`.
ENTRYPOINT ["node", "--import", "tsx", "/app/src/main.ts"]
CMD ["dev"]
