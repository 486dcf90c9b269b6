# One image for both the api and the pipeline services (ROLE picks which runs).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json ./
COPY lib ./lib
COPY sql ./sql
COPY pipeline ./pipeline
COPY api ./api
COPY bin ./bin
ENV NODE_ENV=production
RUN mkdir -p var && chown node:node var
USER node
EXPOSE 8080
CMD ["node_modules/.bin/tsx", "bin/serve.ts"]
