# One image for both the api and the pipeline services (ROLE picks which runs): compiled
# JavaScript on the current LTS Node (26, LTS since 2026-10-28; its official images are Debian 13,
# trixie), production dependencies only, running as an unprivileged user.

# build: the TypeScript compiled to dist/ (with sql/ and verify/) and the web front end built into dist/web/dist,
# using the dev dependencies
FROM node:26.13.0-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY lib ./lib
COPY sql ./sql
COPY pipeline ./pipeline
COPY sim ./sim
COPY api ./api
COPY bin ./bin
COPY web ./web
COPY docs/methodology.md ./docs/methodology.md
COPY verify ./verify
RUN npm run build

# run: dist/ and production dependencies, nothing else
FROM node:26.13.0-trixie-slim
ENV NODE_ENV=production
# the commit every replication bundle names (docker build --build-arg GIT_COMMIT=$(git rev-parse HEAD);
# docker-compose.yml passes $GIT_COMMIT)
ARG GIT_COMMIT=unknown
ENV AFRATES_GIT_COMMIT=$GIT_COMMIT
# freed memory goes back to the system: jemalloc, as make run starts the service (the Makefile
# explains), at one path whatever the architecture
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/* \
 && ln -s "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" /usr/local/lib/libjemalloc.so.2
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
RUN mkdir -p var && chown node:node var
# for the service only, not the image's build steps above (npm ran on the system's malloc)
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0
USER node
EXPOSE 8080
CMD ["node", "dist/bin/serve.js"]
