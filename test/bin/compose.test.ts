// docker-compose.yml, checked where `docker compose config` cannot run (no Docker on this machine):
// its structure as the compose specification has it, every file it mounts present in the
// repository, and the `monitoring` profile wired end to end: Prometheus scrapes the afrates
// services where their metrics listeners are, Grafana reads that Prometheus and loads the dashboard
// from where it is mounted. Every healthcheck runs as the container would run it (through /bin/sh
// for CMD-SHELL), against stand-in commands that record what they were given; the afrates image is
// built once, with the commit bundles name, and run by every afrates service.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

type Scalar = string | number | boolean;
interface Service {
  image?: string;
  build?: string | { context: string; args?: Record<string, string> };
  pull_policy?: string;
  profiles?: unknown;
  command?: unknown;
  environment?: Record<string, Scalar | null> | string[];
  ports?: unknown[];
  volumes?: unknown[];
  depends_on?: string[] | Record<string, { condition: string }>;
  healthcheck?: { test: unknown };
  restart?: string;
}
interface Compose {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** The file as compose reads it: YAML 1.1 merge keys (`<<: *afrates-env`) resolved; no error or warning. */
function load<T>(file: string): T {
  const doc = parseDocument(read(file), { merge: true, uniqueKeys: true });
  expect(doc.errors.map((e) => e.message), file).toEqual([]);
  expect(doc.warnings.map((e) => e.message), file).toEqual([]);
  return doc.toJS() as T;
}

const compose = load<Compose>('docker-compose.yml');
const services = Object.entries(compose.services);

function environment(s: Service): Record<string, string> {
  const env = s.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((e) => [e.split('=')[0]!, e.split('=').slice(1).join('=')]));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** A volume entry's source, target and whether it is a file or folder of this repository. */
function mount(v: unknown): { source: string; target: string; bind: boolean } {
  expect(typeof v, JSON.stringify(v)).toBe('string'); // the short syntax is all this file uses
  const [source, target, mode, ...rest] = (v as string).split(':');
  expect(rest, String(v)).toEqual([]);
  expect(target, String(v)).toMatch(/^\//);
  if (mode !== undefined) expect(['ro', 'rw']).toContain(mode);
  return { source: source!, target: target!, bind: /^[./]/.test(source!) };
}

const profilesOf = (s: Service) => (s.profiles as string[] | undefined) ?? [];

describe('docker-compose.yml', () => {
  it('has only keys of the compose specification, and every service is built or pulled at a pinned version', () => {
    for (const key of Object.keys(compose)) expect(['name', 'services', 'volumes', 'networks', 'configs', 'secrets'].includes(key) || key.startsWith('x-'), key).toBe(true);
    expect(services.length).toBeGreaterThan(0);
    const known = ['image', 'build', 'pull_policy', 'profiles', 'command', 'entrypoint', 'environment', 'env_file', 'ports', 'expose', 'volumes', 'depends_on', 'healthcheck', 'restart', 'deploy', 'user', 'networks', 'labels', 'stop_grace_period', 'ulimits', 'logging'];
    for (const [name, s] of services) {
      for (const key of Object.keys(s)) expect(known, `${name}.${key}`).toContain(key);
      expect(s.image !== undefined || s.build !== undefined, `${name}: an image or a build`).toBe(true);
      if (s.image !== undefined) expect(s.image, name).toMatch(/^[a-z0-9][a-z0-9._/-]*:(?!latest$)[A-Za-z0-9][A-Za-z0-9._-]*$/);
      if (s.build !== undefined) expect(fs.existsSync(path.join(root, typeof s.build === 'string' ? s.build : s.build.context, 'Dockerfile')), name).toBe(true);
      if (s.pull_policy !== undefined) expect(['always', 'never', 'missing', 'build'], name).toContain(s.pull_policy);
      if (s.restart !== undefined) expect(['no', 'always', 'on-failure', 'unless-stopped'], name).toContain(s.restart);
      if (s.command !== undefined) expect(Array.isArray(s.command) && (s.command as unknown[]).every((c) => typeof c === 'string'), `${name}.command`).toBe(true);
    }
  });

  it('lists profiles as lists of names, and no service outside a profile depends on one inside it', () => {
    for (const [name, s] of services) {
      if (s.profiles === undefined) continue;
      expect(Array.isArray(s.profiles), `${name}.profiles`).toBe(true);
      for (const p of s.profiles as unknown[]) expect(p, name).toMatch(/^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/);
    }
    for (const [name, s] of services) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      if (!Array.isArray(s.depends_on)) {
        for (const [dep, cond] of Object.entries(s.depends_on ?? {})) expect(['service_started', 'service_healthy', 'service_completed_successfully'], `${name} -> ${dep}`).toContain(cond.condition);
      }
      for (const dep of deps) {
        expect(compose.services[dep], `${name} depends on ${dep}`).toBeDefined();
        // compose refuses to start a service whose dependency's profile is not enabled
        for (const p of profilesOf(compose.services[dep]!)) expect(profilesOf(s), `${name} -> ${dep} (profile ${p})`).toContain(p);
        if (compose.services[dep]!.healthcheck === undefined && !Array.isArray(s.depends_on)) {
          expect((s.depends_on as Record<string, { condition: string }>)[dep]!.condition, `${name} waits for ${dep} to be healthy, which has no healthcheck`).not.toBe('service_healthy');
        }
      }
    }
  });

  it('has well-formed ports, environments, healthchecks and ${VARIABLE} references', () => {
    for (const [name, s] of services) {
      for (const p of s.ports ?? []) expect(String(p), `${name}.ports`).toMatch(/^(?:(?:\d{1,3}\.){3}\d{1,3}:)?(?:\d{1,5}:)?\d{1,5}(?:\/(?:tcp|udp))?$/);
      if (Array.isArray(s.environment)) for (const e of s.environment) expect(e, `${name}.environment`).toMatch(/^[A-Z_][A-Z0-9_]*=/);
      else for (const [k, v] of Object.entries(s.environment ?? {})) {
        expect(k, `${name}.environment`).toMatch(/^[A-Z_][A-Z0-9_]*$/);
        expect(['string', 'number', 'boolean'].includes(typeof v) || v === null, `${name}.environment.${k}`).toBe(true);
      }
      if (s.healthcheck) {
        const test = s.healthcheck.test as string[];
        expect(Array.isArray(test) && ['CMD', 'CMD-SHELL', 'NONE'].includes(test[0]!), `${name}.healthcheck`).toBe(true);
      }
    }
    // every $ starts ${NAME}, ${NAME:-default}, ${NAME:?message} (or is escaped as $$)
    // (comment lines aside: compose interpolates values, and YAML drops comments first)
    const text = read('docker-compose.yml').replace(/^\s*#.*$/gm, '').replace(/\$\$/g, '');
    for (const m of text.matchAll(/\$/g)) {
      const rest = text.slice(m.index);
      expect(rest.slice(0, 80), 'a $ that is no ${VARIABLE}').toMatch(/^\$\{[A-Z_][A-Z0-9_]*(?:(?::?[-?+])[^}\n]*)?\}/);
    }
  });

  it('mounts only files that exist in the repository, and named volumes it declares', () => {
    for (const [name, s] of services) {
      for (const v of s.volumes ?? []) {
        const { source, bind } = mount(v);
        if (bind) expect(fs.existsSync(path.join(root, source)), `${name}: ${source}`).toBe(true);
        else expect(Object.keys(compose.volumes ?? {}), `${name}: volume ${source}`).toContain(source);
      }
    }
  });
});

describe("the compose file's monitoring profile", () => {
  const prometheus = compose.services.prometheus!;
  const grafana = compose.services.grafana!;
  /** container path -> the repository path mounted there */
  const mounts = (s: Service) => new Map((s.volumes ?? []).map(mount).filter((m) => m.bind).map((m) => [m.target, path.join(root, m.source)]));
  /** the repository file a service sees at `file` (inside a mounted folder or the file itself) */
  const seen = (s: Service, file: string): string | null => {
    for (const [target, source] of mounts(s)) {
      if (file === target) return source;
      if (file.startsWith(`${target}/`)) return path.join(source, file.slice(target.length + 1));
    }
    return null;
  };

  it('starts Prometheus and Grafana only with --profile monitoring, at pinned versions, on loopback host ports', () => {
    expect(prometheus.profiles).toEqual(['monitoring']);
    expect(grafana.profiles).toEqual(['monitoring']);
    expect(prometheus.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(grafana.image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
    for (const s of [prometheus, grafana]) for (const p of s.ports ?? []) expect(String(p)).toMatch(/^127\.0\.0\.1:/);
    // the afrates services run without the profile
    expect(profilesOf(compose.services.api!)).toEqual([]);
    expect(profilesOf(compose.services.pipeline!)).toEqual([]);
  });

  it("has Prometheus scrape every afrates service where its metrics listener is", () => {
    const configPath = seen(prometheus, '/etc/prometheus/prometheus.yml');
    expect(configPath).not.toBeNull();
    expect(prometheus.command).toContain('--config.file=/etc/prometheus/prometheus.yml');
    const config = parse(fs.readFileSync(configPath!, 'utf8')) as {
      scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; type: string; port: number }[]; static_configs?: { targets: string[] }[] }[];
    };
    const scraped = new Map<string, number>();
    for (const job of config.scrape_configs) {
      for (const sd of job.dns_sd_configs ?? []) for (const n of sd.names) scraped.set(n, sd.port);
      for (const st of job.static_configs ?? []) for (const t of st.targets) scraped.set(t.split(':')[0]!, Number(t.split(':')[1]));
    }
    const afrates = services.filter(([, s]) => environment(s).ROLE !== undefined).map(([name]) => name);
    expect(afrates.sort()).toEqual(['api', 'api-a', 'api-b', 'pipeline', 'pipeline-a', 'pipeline-b']); // -a, -b: the scale profile's
    for (const name of afrates) {
      const env = environment(compose.services[name]!);
      expect(env.METRICS_PORT, name).toMatch(/^\d+$/);
      expect(scraped.get(name), `${name} is scraped on METRICS_PORT`).toBe(Number(env.METRICS_PORT));
      // loopback inside the container would be out of Prometheus' reach
      expect(env.METRICS_HOST, name).toBe('0.0.0.0');
      // never published to the host: the listener is for the compose network
      for (const p of compose.services[name]!.ports ?? []) expect(String(p).split(':').at(-1), name).not.toBe(env.METRICS_PORT);
    }
    for (const host of scraped.keys()) expect(host === 'localhost' || compose.services[host] !== undefined, host).toBe(true);
  });

  it('has Grafana read that Prometheus and load the dashboard from where it is mounted', () => {
    const datasourceFile = seen(grafana, '/etc/grafana/provisioning/datasources/prometheus.yml');
    const providerFile = seen(grafana, '/etc/grafana/provisioning/dashboards/afrates.yml');
    expect(datasourceFile && fs.existsSync(datasourceFile)).toBe(true);
    expect(providerFile && fs.existsSync(providerFile)).toBe(true);
    const { datasources } = parse(fs.readFileSync(datasourceFile!, 'utf8')) as { datasources: { uid: string; type: string; url: string }[] };
    expect(datasources).toHaveLength(1);
    expect(datasources[0]!.type).toBe('prometheus');
    const url = new URL(datasources[0]!.url);
    expect(compose.services[url.hostname]).toBe(prometheus);
    expect((prometheus.ports ?? []).map((p) => String(p).split(':').at(-1))).toContain(url.port);

    const { providers } = parse(fs.readFileSync(providerFile!, 'utf8')) as { providers: { type: string; options: { path: string } }[] };
    expect(providers).toHaveLength(1);
    const dashboards = seen(grafana, providers[0]!.options.path);
    expect(dashboards, providers[0]!.options.path).not.toBeNull();
    const files = fs.readdirSync(dashboards!).filter((f) => f.endsWith('.json'));
    expect(files).toEqual(['afrates.json']);
    const home = seen(grafana, environment(grafana).GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH!);
    expect(home && fs.existsSync(home), 'the home dashboard').toBe(true);

    // every panel and query names the provisioned data source
    const dashboard = JSON.parse(fs.readFileSync(path.join(dashboards!, 'afrates.json'), 'utf8')) as { panels: { type: string; datasource?: { uid: string }; targets?: { datasource: { uid: string } }[] }[] };
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid).toBe(datasources[0]!.uid);
      for (const t of panel.targets ?? []) expect(t.datasource.uid).toBe(datasources[0]!.uid);
    }
  });
});

describe("the compose file's afrates image", () => {
  const afrates = services.filter(([, s]) => environment(s).ROLE !== undefined);

  it('is built once, by one service (the default stack\'s pipeline; pipeline-a for `up lb` of profile scale, which starts no plain pipeline), and every afrates service runs that image without pulling it', () => {
    expect(afrates.map(([name]) => name).sort()).toEqual(['api', 'api-a', 'api-b', 'pipeline', 'pipeline-a', 'pipeline-b']);
    const builders = services.filter(([, s]) => s.build !== undefined);
    expect(builders.map(([name]) => name)).toEqual(['pipeline', 'pipeline-a']);
    // the same build, in apart sets of services: the default one, and the scale profile's
    expect(compose.services['pipeline-a']!.build).toEqual(compose.services.pipeline!.build);
    expect(profilesOf(compose.services.pipeline!)).toEqual([]);
    expect(profilesOf(compose.services['pipeline-a']!)).toEqual(['scale']);
    const image = builders[0]![1].image;
    expect(image).toBe('afrates:local');
    for (const [name, s] of afrates) {
      expect(s.image, name).toBe(image);
      // a registry has no afrates:local: the others wait for the build instead of asking one
      if (s.build === undefined) expect(s.pull_policy, name).toBe('never');
    }
  });

  it('is given the commit replication bundles name, as the Dockerfile reads it', () => {
    const build = compose.services.pipeline!.build as { context: string; args?: Record<string, string> };
    expect(build.args?.GIT_COMMIT).toBe('${GIT_COMMIT:-unknown}');
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/^ARG GIT_COMMIT=unknown$/m);
    expect(dockerfile).toMatch(/^ENV AFRATES_GIT_COMMIT=\$GIT_COMMIT$/m);
    // the command the file and the operations guide give sets it
    expect(read('docker-compose.yml')).toContain('GIT_COMMIT=$(git rev-parse HEAD) docker compose up -d --build');
    expect(read('docs/operations.md')).toContain('GIT_COMMIT=$(git rev-parse HEAD) docker compose up -d --build');
  });
});

describe("the compose file's healthchecks", () => {
  // Stand-ins for the commands a healthcheck calls: each records its name and arguments, and
  // succeeds. /bin/sh finds nothing else on PATH, so a word the shell mistakes for a command fails.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-healthcheck-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'bin');
  const log = path.join(dir, 'calls');
  fs.mkdirSync(bin);
  for (const name of ['node', 'pg_isready', 'psql', 'redis-cli', 'grep']) {
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n{ printf '%s\\0' "\${0##*/}" "$@"; printf '\\036'; } >> "$CALLS"\n`, { mode: 0o755 });
  }
  const calls = (): string[][] =>
    fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\x1e').filter(Boolean).map((c) => c.split('\0').slice(0, -1)) : [];

  /** Runs a healthcheck's test as Docker does in a working directory of its own; what was called, and what it left there. */
  function run(test: string[]): { calls: string[][]; stderr: string; left: string[] } {
    const cwd = fs.mkdtempSync(path.join(dir, 'cwd-'));
    fs.rmSync(log, { force: true });
    const env = { PATH: bin, CALLS: log };
    const [kind, ...rest] = test;
    let stderr = '';
    try {
      if (kind === 'CMD-SHELL') execFileSync('/bin/sh', ['-c', rest.join(' ')], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
      else execFileSync(path.join(bin, rest[0]!), rest.slice(1), { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      stderr = String((err as { stderr?: Buffer }).stderr ?? err);
    }
    return { calls: calls(), stderr, left: fs.readdirSync(cwd) };
  }

  const checked = services.filter(([, s]) => s.healthcheck !== undefined && (s.healthcheck.test as string[])[0] !== 'NONE');

  it.each(checked.map(([name]) => name))('%s: runs its command as written, and leaves no file behind', (name) => {
    const test = compose.services[name]!.healthcheck!.test as string[];
    const result = run(test);
    expect(result.stderr, name).toBe('');
    expect(result.left, `${name} wrote files where it ran`).toEqual([]);
    expect(result.calls.length, name).toBeGreaterThan(0);
    for (const [command, ...args] of result.calls) {
      if (command !== 'node') continue;
      // node -e <script>: the script arrives whole and is JavaScript
      expect(args[0], name).toBe('-e');
      expect(args).toHaveLength(2);
      expect(() => new vm.Script(args[1]!), name).not.toThrow();
    }
  });

  it("the pipeline's asks the database for a cycle recorded in the last five minutes, its SQL intact", () => {
    const [[command, flag, script]] = run(compose.services.pipeline!.healthcheck!.test as string[]).calls as [string[]];
    expect([command, flag]).toEqual(['node', '-e']);
    expect(script).toContain("p`select 1 from ingest_cycles where finished_at > now() - interval '5 minutes' limit 1`");
  });
});
