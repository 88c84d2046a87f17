// Starts a Tributary of its own for a conformance run: `node bin/tributary.mjs serve` as a child
// process on a free port with a fresh temporary data directory, output to a log file; waits until
// `GET /default/api/info` answers; stops it with SIGTERM (SIGKILL if it lingers), also when the
// runner exits early.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServerHandle {
  baseUrl: string;
  user: string;
  password: string;
  logFile: string;
  dataDir: string;
  stop: () => Promise<void>;
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function getStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

export interface StartOptions {
  repoRoot: string;
  /** Directory for the log and data (default: a new directory under the OS temp dir). */
  workDir?: string;
  readyTimeoutMs?: number;
}

export async function startServer(opts: StartOptions): Promise<ServerHandle> {
  const workDir = opts.workDir ?? mkdtempSync(join(tmpdir(), 'tributary-conformance-'));
  mkdirSync(workDir, { recursive: true });
  const dataDir = join(workDir, 'data');
  const logFile = join(workDir, 'server.log');
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const fd = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, ['bin/tributary.mjs', 'serve'], {
    cwd: opts.repoRoot,
    env: {
      ...process.env,
      TRIBUTARY_DATA: dataDir,
      TRIBUTARY_PORT: String(port),
      TRIBUTARY_HOST: '127.0.0.1',
      TRIBUTARY_ADMIN_PASSWORD: password,
    },
    stdio: ['ignore', fd, fd],
    // its own process group: a Ctrl-C in the terminal reaches the runner, which stops the server
    // after cleaning up, instead of killing the server in the middle of a case
    detached: true,
  });
  closeSync(fd);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );
  // last resort: never leave the server behind when the runner exits
  const killOnExit = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);

  const stop = async () => {
    process.off('exit', killOnExit);
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!exited) child.kill('SIGKILL');
      }, 15_000);
      await exitPromise;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  const baseUrl = `http://127.0.0.1:${port}/default/api`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(
        `the server exited during startup (code ${exited.code}, signal ${exited.signal}); log ${logFile}:\n${tail(logFile)}`,
      );
    }
    const status = await getStatus(`${baseUrl}/info`);
    if (status > 0 && status < 500) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the server did not answer ${baseUrl}/info in time; log ${logFile}:\n${tail(logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { baseUrl, user: 'admin', password, logFile, dataDir, stop };
}
