import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { StartupError } from './startup-error.ts';

const NETWORK_REASONS: Record<string, string> = {
  EADDRINUSE: 'is in use',
  EACCES: 'needs privileges this user does not have',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/** The StartupError of a failed listen, or undefined when the error is not one an operator fixes. */
export function listenError(e: unknown, host: string, port: number): StartupError | undefined {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  const reason = NETWORK_REASONS[code];
  if (!reason) return undefined;
  return new StartupError(
    `cannot listen on ${host}:${port}: the ${code === 'EADDRNOTAVAIL' ? 'address' : 'port'} ${reason} (${code}); choose another with --port/TRIBUTARY_PORT or --host/TRIBUTARY_HOST`,
  );
}

/** Fail now if the port cannot be listened on (checked before anything is created). */
export async function checkPort(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (e) => reject(listenError(e, host, port) ?? e));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** Fail now if the data directory exists but is not a directory this user can read and write. */
export async function checkDataDir(dir: string): Promise<void> {
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return; // created on start
    throw new StartupError(`cannot use data directory ${dir}: ${code ?? (e as Error).message}`);
  }
  if (!st.isDirectory()) throw new StartupError(`cannot use data directory ${dir}: it is not a directory`);
  try {
    await access(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    throw new StartupError(`cannot use data directory ${dir}: this user cannot read and write it`);
  }
}
