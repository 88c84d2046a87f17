import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The project's shared reference directory (`shared/`, the repository's sibling): found from the
 * repository root upwards, so a clone next to it works and a git worktree a level deeper too;
 * `TRIBUTARY_SHARED` overrides.
 */
export function sharedDir(): string {
  const given = process.env.TRIBUTARY_SHARED;
  if (given) return resolve(given);
  let dir = REPO_ROOT;
  for (let i = 0; i < 4; i++) {
    const candidate = join(dirname(dir), 'shared');
    if (existsSync(join(candidate, 'reference'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`no shared/ directory beside ${REPO_ROOT} or above it (set TRIBUTARY_SHARED)`);
}

/** A file under shared/reference. */
export function sharedReference(name: string): string {
  return join(sharedDir(), 'reference', name);
}
