import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface VersionInfo {
  product: string;
  version: string;
  commit: string;
  buildTime: string;
  chdb: string;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/**
 * Tributary's own version, the commit it runs from and that commit's time (its build time, since
 * TypeScript runs from source), read once at start-up.
 */
export function readVersionInfo(): VersionInfo {
  const pkg = readJson(join(ROOT, 'package.json'));
  let commit = 'unknown';
  let buildTime = new Date().toISOString();
  try {
    const out = execFileSync('git', ['log', '-1', '--format=%H%n%cI'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim()
      .split('\n');
    if (out[0]) commit = out[0];
    if (out[1]) buildTime = new Date(out[1]).toISOString();
  } catch {
    // Not a git checkout: keep the defaults.
  }
  let chdb = 'unknown';
  try {
    chdb = String(readJson(join(ROOT, 'node_modules', 'chdb', 'package.json')).version);
  } catch {
    // chdb is not where npm puts it; report unknown.
  }
  return { product: 'Tributary', version: String(pkg.version), commit, buildTime, chdb };
}
