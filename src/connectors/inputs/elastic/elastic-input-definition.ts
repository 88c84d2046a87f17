import { err } from '../../../errors/tributary-error.ts';
import { closestName } from '../closest-name.ts';
import type { InputSettingValue } from '../input-settings.ts';

/**
 * An input of type 'elastic': a listener that speaks the Elasticsearch `_bulk` protocol and writes
 * every document into `target_stream` (`_raw string, _index string, _id string`).
 * Every setting is resolved (defaults filled in), so a definition read back from the catalog means
 * the same thing after an upgrade that changes a default.
 */
export interface ElasticInputDefinition {
  name: string;
  type: 'elastic';
  target_stream: string;
  tcp_port: number;
  listen_host: string;
  /** Basic-auth credentials that clients must send; both unset = any credentials accepted. */
  username?: string;
  password?: string;
  /** The Elasticsearch version reported by `GET /` (clients pick templates and features by it). */
  es_version: string;
  /** Largest request body accepted, compressed on the wire and again once decompressed. */
  max_body_bytes: number;
  comment?: string;
}

export const ELASTIC_INPUT_DEFAULTS = {
  tcp_port: 9997,
  listen_host: '0.0.0.0',
  es_version: '8.17.0',
  /** 100 MiB, Elasticsearch's own `http.max_content_length` default. */
  max_body_bytes: 100 * 1024 * 1024,
} as const;

/** 256 MiB: a decompressed body is decoded into one string, and V8 strings stop at ~512 MiB. */
export const MAX_BODY_BYTES_LIMIT = 256 * 1024 * 1024;

/** The settings a CREATE INPUT ... type='elastic' accepts, in the order SHOW CREATE prints them. */
export const ELASTIC_SETTING_NAMES = [
  'type',
  'target_stream',
  'tcp_port',
  'listen_host',
  'username',
  'password',
  'es_version',
  'max_body_bytes',
] as const;

const SECRET_SETTINGS = new Set(['password']);

export function isSecretSetting(name: string): boolean {
  return SECRET_SETTINGS.has(name);
}

/**
 * Validate the SETTINGS of `CREATE INPUT <name> SETTINGS ...` for type 'elastic' and resolve the
 * defaults. Setting names are matched case-insensitively; every error names the setting.
 */
export function validateElasticInputSettings(
  name: string,
  settings: Readonly<Record<string, InputSettingValue>>,
  comment?: string,
): ElasticInputDefinition {
  if (!name || typeof name !== 'string')
    throw err('INVALID_FIELD', { field: 'name', detail: 'an input needs a name' });
  const given = new Map<string, InputSettingValue>();
  for (const [key, value] of Object.entries(settings)) {
    const k = key.toLowerCase();
    if (!(ELASTIC_SETTING_NAMES as readonly string[]).includes(k)) {
      const near = closestName(k, ELASTIC_SETTING_NAMES);
      throw err('INPUT_UNKNOWN_SETTING', {
        input: name,
        setting: key,
        hint: near ? `; did you mean ${near}?` : '',
      });
    }
    if (given.has(k)) throw err('INPUT_BAD_SETTING', { input: name, setting: key, detail: 'is given twice' });
    given.set(k, value);
  }

  const type = given.get('type');
  if (type === undefined) throw err('INPUT_MISSING_SETTING', { input: name, setting: 'type' });
  if (type !== 'elastic')
    throw err('INPUT_BAD_SETTING', { input: name, setting: 'type', detail: "must be 'elastic'" });

  const def: ElasticInputDefinition = {
    name,
    type: 'elastic',
    target_stream: requiredString(name, given, 'target_stream'),
    tcp_port: port(name, given.get('tcp_port')),
    listen_host: optionalString(name, given, 'listen_host') ?? ELASTIC_INPUT_DEFAULTS.listen_host,
    es_version: esVersion(name, given.get('es_version')),
    max_body_bytes: maxBodyBytes(name, given.get('max_body_bytes')),
  };
  const username = optionalString(name, given, 'username');
  const password = given.has('password') ? stringValue(name, 'password', given.get('password')) : undefined;
  if (username !== undefined && password === undefined)
    throw err('INPUT_MISSING_SETTING', { input: name, setting: 'password' });
  if (password !== undefined && username === undefined)
    throw err('INPUT_MISSING_SETTING', { input: name, setting: 'username' });
  if (username?.includes(':'))
    throw err('INPUT_BAD_SETTING', {
      input: name,
      setting: 'username',
      detail: "cannot contain ':' (Basic auth)",
    });
  if (username !== undefined) def.username = username;
  if (password !== undefined) def.password = password;
  if (comment !== undefined && comment !== '') def.comment = comment;
  return def;
}

/** The settings of a definition as CREATE INPUT would give them (secrets included). */
export function elasticInputSettings(def: ElasticInputDefinition): Record<string, InputSettingValue> {
  const out: Record<string, InputSettingValue> = {};
  for (const key of ELASTIC_SETTING_NAMES) {
    const v = def[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function stringValue(input: string, setting: string, v: InputSettingValue | undefined): string {
  if (typeof v !== 'string') throw err('INPUT_BAD_SETTING', { input, setting, detail: 'must be a string' });
  return v;
}

function requiredString(input: string, given: Map<string, InputSettingValue>, setting: string): string {
  if (!given.has(setting)) throw err('INPUT_MISSING_SETTING', { input, setting });
  const s = stringValue(input, setting, given.get(setting));
  if (s.trim() === '') throw err('INPUT_BAD_SETTING', { input, setting, detail: 'must not be empty' });
  return s;
}

function optionalString(
  input: string,
  given: Map<string, InputSettingValue>,
  setting: string,
): string | undefined {
  if (!given.has(setting)) return undefined;
  const s = stringValue(input, setting, given.get(setting));
  if (s.trim() === '') throw err('INPUT_BAD_SETTING', { input, setting, detail: 'must not be empty' });
  return s;
}

function integer(v: InputSettingValue): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) return Number(v);
  return undefined;
}

function port(input: string, v: InputSettingValue | undefined): number {
  if (v === undefined) return ELASTIC_INPUT_DEFAULTS.tcp_port;
  const n = integer(v);
  if (n === undefined || n < 0 || n > 65535)
    throw err('INPUT_BAD_SETTING', {
      input,
      setting: 'tcp_port',
      detail: `must be an integer from 0 to 65535 (0 picks a free port), got ${String(v)}`,
    });
  return n;
}

function maxBodyBytes(input: string, v: InputSettingValue | undefined): number {
  if (v === undefined) return ELASTIC_INPUT_DEFAULTS.max_body_bytes;
  const n = integer(v);
  if (n === undefined || n < 1024 || n > MAX_BODY_BYTES_LIMIT)
    throw err('INPUT_BAD_SETTING', {
      input,
      setting: 'max_body_bytes',
      detail: `must be an integer number of bytes from 1024 to ${MAX_BODY_BYTES_LIMIT}, got ${String(v)}`,
    });
  return n;
}

function esVersion(input: string, v: InputSettingValue | undefined): string {
  if (v === undefined) return ELASTIC_INPUT_DEFAULTS.es_version;
  const m = typeof v === 'string' ? /^([0-9]+)\.[0-9]+\.[0-9]+$/.exec(v) : null;
  if (!m || !['7', '8', '9'].includes(m[1]!))
    throw err('INPUT_BAD_SETTING', {
      input,
      setting: 'es_version',
      detail: `must be a version string major.minor.patch with major 7, 8 or 9 (e.g. '8.17.0'), got ${String(v)}`,
    });
  return v as string;
}
