// docker-compose.yml, checked without Docker: its shape (a schema of the keys this file uses: a
// misspelt key fails here, as `docker compose config` would fail it), every reference inside it
// (services, volumes, mounted files), and profile `scale`: a streaming replica of the primary, two
// pipelines that split the venues, two API processes whose settings lib/config.ts accepts and that
// read from that replica, behind an nginx whose upstreams are exactly those processes; every one of
// them names both servers in DATABASE_URL (failover-ready). Where Docker Compose v2 is installed,
// `docker compose config` validates the file too.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig, postgresHosts } from '../../lib/config.js';

const root = path.resolve(import.meta.dirname, '../..');
const text = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; args?: Record<string, string> };
  pull_policy?: string;
  profiles?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  entrypoint?: string[];
  user?: string;
}
const compose = parse(text, { merge: true }) as { name: string; services: Record<string, Service>; volumes: Record<string, null> };
const services = compose.services;

/** What .env sets (docs/operations.md), for ${VAR} and ${VAR:?message} in the file. */
const dotEnv: Record<string, string> = {
  POSTGRES_PASSWORD: 'pw',
  CERT_HMAC_SECRET: 'hmac',
  CERT_ED25519_PRIVATE_KEY: 'pem',
  PUBLIC_URL: 'https://api.afrates.example',
  WEBHOOK_SECRET_KEY: 'cd'.repeat(32),
};
const interpolate = (value: string | number) =>
  String(value).replace(/\$\{([A-Z0-9_]+)(?::\?[^}]*)?\}/g, (_, name: string) => {
    if (!(name in dotEnv)) throw new Error(`\${${name}} is not set by .env`);
    return dotEnv[name]!;
  });
const envOf = (name: string) => Object.fromEntries(Object.entries(services[name]!.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));
const inProfile = (profile: string | null) => Object.keys(services).filter((s) => (profile === null ? !services[s]!.profiles : services[s]!.profiles?.includes(profile)));

const STRINGS = { type: 'array', items: { type: 'string' } } as const;
const schema = {
  type: 'object',
  required: ['name', 'services', 'volumes'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    services: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        anyOf: [{ required: ['image'] }, { required: ['build'] }],
        properties: {
          // a pinned version, never latest; or afrates:local, the image the file builds
          image: { type: 'string', pattern: '^(?:[a-z0-9./-]+:v?[0-9][A-Za-z0-9._-]*|afrates:local)$' },
          build: {
            type: 'object',
            required: ['context'],
            additionalProperties: false,
            properties: { context: { type: 'string' }, args: { type: 'object', additionalProperties: { type: 'string' } } },
          },
          pull_policy: { enum: ['always', 'never', 'missing', 'build'] },
          profiles: STRINGS,
          user: { type: 'string' },
          entrypoint: STRINGS,
          command: STRINGS,
          environment: { type: 'object', additionalProperties: { type: ['string', 'number'] } },
          volumes: STRINGS,
          ports: { type: 'array', items: { type: 'string', pattern: '^(\\d{1,3}(\\.\\d{1,3}){3}:)?\\d+:\\d+$' } },
          depends_on: {
            type: 'object',
            additionalProperties: { type: 'object', required: ['condition'], additionalProperties: false, properties: { condition: { enum: ['service_started', 'service_healthy'] } } },
          },
          healthcheck: {
            type: 'object',
            required: ['test'],
            additionalProperties: false,
            properties: { test: STRINGS, interval: { type: 'string' }, timeout: { type: 'string' }, start_period: { type: 'string' }, retries: { type: 'integer' } },
          },
          restart: { enum: ['no', 'always', 'on-failure', 'unless-stopped'] },
        },
      },
    },
    volumes: { type: 'object', additionalProperties: { type: 'null' } },
  },
} as const;

describe('docker-compose.yml', () => {
  it('has the shape of a Compose file: only keys it knows, images pinned to a version', () => {
    const validate = new Ajv({ allErrors: true }).compile(schema);
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
  });

  it('refers only to what exists: services, named volumes, files in the repository', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const dependency of Object.keys(service.depends_on ?? {})) {
        expect(services, `${name} depends on ${dependency}`).toHaveProperty([dependency]);
        // a service of no profile must not wait for one that runs only in a profile
        if (!service.profiles) expect(services[dependency]!.profiles, `${name} -> ${dependency}`).toBeUndefined();
      }
      for (const volume of service.volumes ?? []) {
        const [source] = volume.split(':');
        if (source!.startsWith('./')) expect(fs.existsSync(path.join(root, source!)), `${name} mounts ${source}`).toBe(true);
        else expect(compose.volumes, `${name} uses volume ${source}`).toHaveProperty([source!]);
      }
    }
  });

  it('runs the same stack as before without a profile: TimescaleDB, Redis, the pipeline and one API', () => {
    expect(inProfile(null)).toEqual(['timescaledb', 'redis', 'pipeline', 'api']);
    expect(envOf('api')).not.toHaveProperty('DATABASE_READ_URL');
  });

  it('gives every afrates process the same signing and sealing keys (the worker opens what the API sealed)', () => {
    const ours = Object.keys(services).filter((s) => envOf(s).ROLE);
    expect(ours.length).toBeGreaterThanOrEqual(2);
    for (const name of ['CERT_HMAC_SECRET', 'CERT_ED25519_PRIVATE_KEY', 'WEBHOOK_SECRET_KEY']) {
      for (const s of ours) expect(envOf(s)[name], `${s} ${name}`).toBe(dotEnv[name]);
    }
  });

  describe('profile scale', () => {
    const scaled = inProfile('scale');
    const apis = scaled.filter((s) => envOf(s).ROLE === 'api');

    it('adds a replica of the primary, two pipelines, two API processes and a load balancer', () => {
      expect(scaled).toEqual(['timescaledb-replica', 'pipeline-a', 'pipeline-b', 'api-a', 'api-b', 'lb']);
      expect(apis).toEqual(['api-a', 'api-b']);
      const replica = services['timescaledb-replica']!;
      expect(replica.image).toBe(services.timescaledb!.image); // the same server as the primary
      expect(replica.depends_on?.timescaledb?.condition).toBe('service_healthy');
      expect(replica.entrypoint).toEqual(['/bin/sh', '/usr/local/bin/afrates-replica.sh']);
      expect(replica.volumes).toContain('./docs/compose/replica-entrypoint.sh:/usr/local/bin/afrates-replica.sh:ro');
      expect(envOf('timescaledb-replica')).toMatchObject({ PRIMARY_HOST: 'timescaledb', PGPASSWORD: dotEnv.POSTGRES_PASSWORD });
      // the primary lets it replicate (on a new volume)
      expect(services.timescaledb!.volumes).toContain('./docs/compose/primary-replication.sh:/docker-entrypoint-initdb.d/010-replication.sh:ro');
    });

    it('starts everything it needs from `up lb`: the primary, the replica, Redis, both pipelines and both API processes', () => {
      const needed = new Set<string>();
      const visit = (name: string) => {
        for (const d of Object.keys(services[name]!.depends_on ?? {})) if (!needed.has(d)) (needed.add(d), visit(d));
      };
      visit('lb');
      expect([...needed].sort()).toEqual(['api-a', 'api-b', 'pipeline-a', 'pipeline-b', 'redis', 'timescaledb', 'timescaledb-replica']);
      // one of them builds the image the others run (the plain pipeline, which builds it otherwise, is not started)
      expect([...needed].filter((s) => services[s]!.build)).toEqual(['pipeline-a']);
    });

    it('runs two pipelines on one address that split the venues, each writing to whichever server accepts writes', () => {
      const pipelines = scaled.filter((s) => envOf(s).ROLE === 'pipeline');
      expect(pipelines).toEqual(['pipeline-a', 'pipeline-b']);
      const venues = pipelines.map((name) => loadConfig(envOf(name)).venues);
      // every venue collected once (budgets are per address, and both leave from the Docker host's)
      expect(venues.flatMap((v) => v!).sort()).toEqual(['binance', 'luno', 'quidax', 'valr']);
      for (const name of pipelines) {
        const config = loadConfig(envOf(name));
        expect(config.role).toBe('pipeline');
        expect(postgresHosts(config.databaseUrl!).map((u) => u.split('@')[1]!.split('/')[0])).toEqual(['timescaledb:5432', 'timescaledb-replica:5432']);
        expect(services[name]!.depends_on).toMatchObject({ timescaledb: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
        expect(services[name]!.ports).toBeUndefined();
      }
    });

    it('gives each API process settings lib/config.ts accepts: reads from the replica, writes to the primary, behind one proxy', () => {
      for (const name of apis) {
        const config = loadConfig(envOf(name));
        expect(config.role).toBe('api');
        // failover-ready: both servers, written to whichever accepts writes
        const hosts = postgresHosts(config.databaseUrl!);
        expect(hosts.map((u) => new URL(u).host)).toEqual(['timescaledb:5432', 'timescaledb-replica:5432']);
        expect(config.databaseReadUrls.map((u) => new URL(u).host)).toEqual(['timescaledb-replica:5432']);
        expect(new URL(config.databaseReadUrls[0]!).pathname).toBe(new URL(hosts[0]!).pathname);
        expect(config.trustProxyHops).toBe(1);
        expect(services[name]!.depends_on).toMatchObject({ timescaledb: { condition: 'service_healthy' }, 'timescaledb-replica': { condition: 'service_healthy' } });
        expect(services[name]!.ports).toBeUndefined(); // reached through the load balancer only
      }
    });

    it('balances over exactly those API processes, on the port they listen on', () => {
      const lb = services.lb!;
      expect(lb.image).toMatch(/^nginx:/);
      const mount = lb.volumes!.find((v) => v.endsWith(':/etc/nginx/conf.d/default.conf:ro'))!;
      const conf = fs.readFileSync(path.join(root, mount.split(':')[0]!), 'utf8');
      const upstream = /upstream (\S+) \{([^}]*)\}/.exec(conf)!;
      const servers = [...upstream[2]!.matchAll(/^\s*server (\S+):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`);
      expect(servers).toEqual(apis.map((name) => `${name}:${loadConfig(envOf(name)).port}`));
      expect(conf).toContain(`proxy_pass http://${upstream[1]};`);
      // X-Forwarded-For appended by the one proxy TRUST_PROXY=1 counts
      expect(conf).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
      // idle connections to the API closed before the API closes them (KEEP_ALIVE_SECONDS)
      const idle = Number(/keepalive_timeout (\d+)s;/.exec(conf)![1]);
      for (const name of apis) expect(idle).toBeLessThan(loadConfig(envOf(name)).keepAliveSeconds);
      expect(lb.ports).toEqual(['8090:80']);
    });
  });

  const composeV2 = (() => {
    try {
      execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  it.runIf(composeV2)('passes `docker compose --profile scale config`', () => {
    execFileSync('docker', ['compose', '--profile', 'scale', 'config', '--quiet'], { cwd: root, env: { ...process.env, ...dotEnv }, stdio: 'pipe' });
  });
});
