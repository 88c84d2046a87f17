/** Debian's `nats-server` (with JetStream) started by a test on 127.0.0.1, and stopped. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './serve-process.ts';

export interface NatsServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Start nats-server -js on `port` (a free one by default); `auth` requires a user and password. */
export async function startNatsServer(
  options: { port?: number; auth?: { user: string; pass: string } } = {},
): Promise<NatsServer> {
  const port = options.port ?? (await freePort());
  const store = await mkdtemp(join(tmpdir(), 'nats-js-'));
  const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store];
  if (options.auth) args.push('--user', options.auth.user, '--pass', options.auth.pass);
  const child: ChildProcess = spawn('/usr/sbin/nats-server', args, { stdio: 'ignore' });
  for (let i = 0; i < 200 && !(await reachable(port)); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await rm(store, { recursive: true, force: true });
    },
  };
}
