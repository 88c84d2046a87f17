import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { StartupError } from './startup-error.ts';

/** The file naming the process that serves a data directory. */
export const LOCK_FILE = 'tributary.pid';

/** Data directories this process holds (a second in-process server on one is refused too). */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Take the data directory for this process: `tributary.pid` holds its pid. A live other holder
 * (or this process already serving it) is a StartupError; a stale file (its process gone) is
 * taken over. Answers the release function.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const file = join(dir, LOCK_FILE);
  if (held.has(dir)) throw new StartupError(`data directory ${dir} is already served by this process`);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      held.add(dir);
      return async () => {
        held.delete(dir);
        await unlink(file).catch(() => {});
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const pid = Number.parseInt((await readFile(file, 'utf8').catch(() => '')).trim(), 10);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new StartupError(`data directory ${dir} is in use by another Tributary (process ${pid})`);
    }
    await unlink(file).catch(() => {});
  }
  throw new StartupError(`data directory ${dir}: cannot take ${LOCK_FILE}`);
}
