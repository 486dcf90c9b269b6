// What software made a published value: the package version and the git commit, written into
// every replication bundle. package.json's version is the one software version: health, the OpenAPI
// document, the process registry and the bundles all report it. The commit comes from
// AFRATES_GIT_COMMIT (the Docker image's build argument) or the checkout itself; "unknown" when
// neither says.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Software {
  readonly name: string;
  readonly version: string;
  readonly commit: string;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const PACKAGE = JSON.parse(fs.readFileSync(findUp('package.json'), 'utf8')) as { name: string; version: string };

/** package.json's version. */
export const VERSION = PACKAGE.version;

/** Read once at start. */
export function softwareIdentity(gitCommit?: string): Software {
  let commit = gitCommit;
  if (!commit) {
    try {
      commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).trim();
    } catch {
      commit = 'unknown';
    }
  }
  return { name: PACKAGE.name, version: VERSION, commit };
}

/** package.json beside the source tree (lib/) or the compiled one (dist/lib/). */
function findUp(name: string): string {
  for (let dir = ROOT; ; dir = path.dirname(dir)) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) return file;
    if (path.dirname(dir) === dir) throw new Error(`${name} not found above ${ROOT}`);
  }
}
