import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { Tributary, type Tuning } from '../../src/cli/tributary.ts';
import { type Config, DEFAULTS } from '../../src/config/config.ts';
import { type Logger, silentLogger } from '../../src/log/logger.ts';

export const ADMIN_PASSWORD = 'admin-password-for-tests';

export interface Harness {
  trb: Tributary;
  dataDir: string;
  /** Call a route in-process; `as` picks the credentials (default: the admin). */
  call(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD',
    path: string,
    options?: { body?: unknown; as?: Credentials | null; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  /** Stop the server; the data directory stays for a restart. */
  stop(): Promise<void>;
  /** Start a new server on the same data directory. */
  restart(): Promise<Harness>;
  /** Stop the server and delete the data directory. */
  close(): Promise<void>;
}

export type Credentials =
  | { user: string; password: string }
  | { apiKey: string; header?: 'x-api-key' | 'authorization' };

export const ADMIN: Credentials = { user: 'admin', password: ADMIN_PASSWORD };

export function authHeader(c: Credentials): Record<string, string> {
  if ('apiKey' in c) {
    return c.header === 'authorization' ? { authorization: `ApiKey ${c.apiKey}` } : { 'x-api-key': c.apiKey };
  }
  return { authorization: `Basic ${Buffer.from(`${c.user}:${c.password}`).toString('base64')}` };
}

/** Start Tributary in-process on a fresh (or given) data directory with a known admin password. */
export async function startHarness(
  options: { dataDir?: string; config?: Partial<Config>; tuning?: Tuning; logger?: Logger } = {},
): Promise<Harness> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'tributary-test-')));
  const config: Config = {
    ...DEFAULTS,
    dataDir,
    port: 0,
    host: '127.0.0.1',
    adminPassword: ADMIN_PASSWORD,
    logLevel: 'silent',
    ...options.config,
  };
  const trb = await Tributary.open(config, options.logger ?? silentLogger(), options.tuning);
  const harness: Harness = {
    trb,
    dataDir,
    async call(method, path, opts = {}) {
      const creds = opts.as === undefined ? ADMIN : opts.as;
      const headers: Record<string, string> = { ...(creds ? authHeader(creds) : {}), ...opts.headers };
      const url = path.startsWith('/default/') ? path : `/default/api${path}`;
      const body = opts.body;
      const payload =
        body === undefined
          ? undefined
          : typeof body === 'string' || Buffer.isBuffer(body)
            ? body
            : JSON.stringify(body);
      if (
        body !== undefined &&
        typeof body !== 'string' &&
        !Buffer.isBuffer(body) &&
        !headers['content-type']
      ) {
        headers['content-type'] = 'application/json';
      }
      return trb.api.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
    },
    stop: () => trb.close(),
    async restart() {
      await trb.close();
      return startHarness({ ...options, dataDir });
    },
    async close() {
      await trb.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}
