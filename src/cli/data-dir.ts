import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The umask `tributary serve` runs with: nothing it creates is readable by group or others. */
export const PRIVATE_UMASK = 0o077;

/**
 * Create the data directory if missing and make it private: the directory 0700, and anything
 * under it that group or others may use (left by an earlier version, or created without the
 * umask) 0700 for directories and 0600 for files. Symbolic links have no mode of their own and
 * are left as they are.
 */
export async function securePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  await tighten(dir);
}

async function tighten(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    let st: Awaited<ReturnType<typeof lstat>>;
    try {
      st = await lstat(path);
    } catch {
      continue; // removed meanwhile
    }
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) {
      if (st.mode & 0o077) await chmod(path, 0o700);
      await tighten(path);
    } else if (st.mode & 0o077) {
      await chmod(path, 0o600);
    }
  }
}
