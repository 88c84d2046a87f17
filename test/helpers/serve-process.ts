/**
 * `tributary serve` as a child process, for tests that need the real entry point or a server that
 * does not share the test's event loop.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

const BIN = new URL('../../bin/tributary.mjs', import.meta.url).pathname;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Run {
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
  kill: (signal: NodeJS.Signals) => void;
}

export function serve(args: string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { exit, output: () => out, kill: (s) => child.kill(s) };
}

export async function waitForInfo(url: string, run: Run): Promise<Response> {
  for (let i = 0; i < 300; i++) {
    try {
      return await fetch(url);
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
    if (run.output().includes('configuration error')) break;
  }
  throw new Error(`server did not answer; output:\n${run.output()}`);
}
