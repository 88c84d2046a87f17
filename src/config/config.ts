import { resolve } from 'node:path';
import { LicenseKeyError, parsePublicKeys } from '../license/license-keys.ts';
import { DEFAULT_GROUP_PACING, DEFAULT_TAIL_PACING } from '../streaming/step-pacing.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface Config {
  /** TCP port of the REST API (TRIBUTARY_PORT, default 8000). */
  port: number;
  /** Address the REST API listens on (TRIBUTARY_HOST, default 0.0.0.0). */
  host: string;
  /** Data directory (TRIBUTARY_DATA, default ./data), absolute. */
  dataDir: string;
  /** Initial admin password on first start (TRIBUTARY_ADMIN_PASSWORD); generated when absent. */
  adminPassword: string | undefined;
  /** Log level (TRIBUTARY_LOG_LEVEL, default info). */
  logLevel: LogLevel;
  /** Engine sessions for ad-hoc user queries (TRIBUTARY_ENGINE_USER_SESSIONS, default 2). */
  engineUserSessions: number;
  /** Engine sessions for the catalog and ingest commits (TRIBUTARY_ENGINE_SYSTEM_SESSIONS, default 2). */
  engineSystemSessions: number;
  /** Engine sessions for streaming steps (TRIBUTARY_ENGINE_STREAM_SESSIONS, default 2). */
  engineStreamSessions: number;
  /**
   * The longest a live tail waits to cover several commits in one step while its stream is busy
   * (TRIBUTARY_TAIL_STEP_GAP_MS, default 0: a step per commit; 20 halves the steps of a busy tail). src/streaming/step-pacing.ts.
   */
  tailStepGapMs: number;
  /**
   * The longest materialized views sharing a stream wait to step together over a larger range
   * (TRIBUTARY_VIEW_STEP_GAP_MS, default 200; 0: each steps as soon as its last step ended).
   * src/streaming/shared-step-reads.ts `dueAt`.
   */
  viewStepGapMs: number;
  /**
   * The share of a busy stream's commits (0 to 0.5) a live tail may hold back to read with the next
   * one, when TRIBUTARY_TAIL_STEP_GAP_MS is 0 (TRIBUTARY_TAIL_LATE_SHARE, default 0: none).
   * src/streaming/step-pacing.ts.
   */
  tailLateShare: number;
  /**
   * Ed25519 public keys uploaded licenses must be signed with (TRIBUTARY_LICENSE_PUBLIC_KEYS: PEM
   * blocks and/or base64 of raw 32-byte keys, comma or space separated); none by default.
   */
  licensePublicKeys: string | undefined;
  /**
   * The directory dictionaries' FILE sources are confined to (TRIBUTARY_USER_FILES, default
   * `<data>/user_files`), absolute.
   */
  userFilesDir: string | undefined;
}

/** One configuration variable: its environment name, its CLI flag, and how to read it. */
interface Variable<K extends keyof Config> {
  key: K;
  env: string;
  flag: string;
  parse: (raw: string, name: string) => Config[K];
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

function fraction(min: number, max: number) {
  return (raw: string, name: string): number => {
    const n = Number(raw.trim());
    if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max)
      throw new ConfigError(name, `${name} must be a number between ${min} and ${max}, got "${raw}"`);
    return n;
  };
}

function integer(min: number, max: number) {
  return (raw: string, name: string): number => {
    if (!/^\d+$/.test(raw.trim()))
      throw new ConfigError(name, `${name} must be a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max)
      throw new ConfigError(name, `${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

const VARIABLES = [
  { key: 'port', env: 'TRIBUTARY_PORT', flag: 'port', parse: integer(0, 65535) },
  {
    key: 'host',
    env: 'TRIBUTARY_HOST',
    flag: 'host',
    parse: (raw: string, name: string) => {
      if (!raw.trim()) throw new ConfigError(name, `${name} must not be empty`);
      return raw.trim();
    },
  },
  {
    key: 'dataDir',
    env: 'TRIBUTARY_DATA',
    flag: 'data',
    parse: (raw: string, name: string) => {
      if (!raw.trim()) throw new ConfigError(name, `${name} must not be empty`);
      return resolve(raw);
    },
  },
  {
    key: 'adminPassword',
    env: 'TRIBUTARY_ADMIN_PASSWORD',
    flag: 'admin-password',
    parse: (raw: string, name: string) => {
      if (raw.length < 8) throw new ConfigError(name, `${name} must be at least 8 characters long`);
      return raw;
    },
  },
  {
    key: 'logLevel',
    env: 'TRIBUTARY_LOG_LEVEL',
    flag: 'log-level',
    parse: (raw: string, name: string) => {
      const v = raw.trim().toLowerCase() as LogLevel;
      if (!LOG_LEVELS.includes(v)) {
        throw new ConfigError(name, `${name} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
      }
      return v;
    },
  },
  {
    key: 'engineUserSessions',
    env: 'TRIBUTARY_ENGINE_USER_SESSIONS',
    flag: 'engine-user-sessions',
    parse: integer(1, 64),
  },
  {
    key: 'engineSystemSessions',
    env: 'TRIBUTARY_ENGINE_SYSTEM_SESSIONS',
    flag: 'engine-system-sessions',
    parse: integer(1, 64),
  },
  {
    key: 'engineStreamSessions',
    env: 'TRIBUTARY_ENGINE_STREAM_SESSIONS',
    flag: 'engine-stream-sessions',
    parse: integer(1, 64),
  },
  {
    key: 'tailStepGapMs',
    env: 'TRIBUTARY_TAIL_STEP_GAP_MS',
    flag: 'tail-step-gap-ms',
    parse: integer(0, 10_000),
  },
  {
    key: 'viewStepGapMs',
    env: 'TRIBUTARY_VIEW_STEP_GAP_MS',
    flag: 'view-step-gap-ms',
    parse: integer(0, 10_000),
  },
  {
    key: 'tailLateShare',
    env: 'TRIBUTARY_TAIL_LATE_SHARE',
    flag: 'tail-late-share',
    parse: fraction(0, 0.5),
  },
  {
    key: 'licensePublicKeys',
    env: 'TRIBUTARY_LICENSE_PUBLIC_KEYS',
    flag: 'license-public-keys',
    parse: (raw: string, name: string) => {
      try {
        if (parsePublicKeys(raw).length === 0) throw new LicenseKeyError('no key given');
      } catch (e) {
        if (e instanceof LicenseKeyError) throw new ConfigError(name, `${name}: ${e.message}`);
        throw e;
      }
      return raw;
    },
  },
  {
    key: 'userFilesDir',
    env: 'TRIBUTARY_USER_FILES',
    flag: 'user-files',
    parse: (raw: string, name: string) => {
      if (!raw.trim()) throw new ConfigError(name, `${name} must not be empty`);
      return resolve(raw);
    },
  },
] as const satisfies readonly Variable<keyof Config>[];

export const DEFAULTS: Config = {
  port: 8000,
  host: '0.0.0.0',
  dataDir: resolve('data'),
  adminPassword: undefined,
  logLevel: 'info',
  engineUserSessions: 2,
  engineSystemSessions: 2,
  engineStreamSessions: 2,
  tailStepGapMs: DEFAULT_TAIL_PACING.maxGapMs,
  viewStepGapMs: DEFAULT_GROUP_PACING.maxGapMs,
  tailLateShare: DEFAULT_TAIL_PACING.lateShare,
  licensePublicKeys: undefined,
  userFilesDir: undefined,
};

/** Names of every configuration variable, for help text and docs. */
export const VARIABLE_NAMES = VARIABLES.map((v) => ({ env: v.env, flag: `--${v.flag}` }));

/**
 * Read the configuration from the environment, then from CLI flags, which win. A flag may be
 * spelled like the variable (`--TRIBUTARY_PORT=8001`) or short (`--port 8001`). A bad value throws
 * a ConfigError naming the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[] = []): Config {
  const config: Config = { ...DEFAULTS };
  const set = (v: (typeof VARIABLES)[number], raw: string, name: string) => {
    (config as unknown as Record<string, unknown>)[v.key] = v.parse(raw, name);
  };
  for (const v of VARIABLES) {
    const raw = env[v.env];
    if (raw !== undefined && raw !== '') set(v, raw, v.env);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new ConfigError(arg, `unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const v = VARIABLES.find((x) => x.env === name || x.flag === name);
    if (!v) throw new ConfigError(name, `unknown option --${name}`);
    const raw: string | undefined = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (raw === undefined) throw new ConfigError(v.env, `--${name} needs a value (${v.env})`);
    set(v, raw, v.env);
  }
  return config;
}
