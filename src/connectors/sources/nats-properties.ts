import { err } from '../../errors/tributary-error.ts';

/** How a message becomes a row: `json` (its fields are columns) or `text` (column `raw`). */
export type NatsDataType = 'json' | 'text';
export type NatsDeliverPolicy = 'all' | 'new' | 'last';

export interface NatsProperties {
  /** Server URLs (`nats://host:4222`), one or more. */
  readonly servers: string[];
  readonly subject: string;
  readonly dataType: NatsDataType;
  readonly queueGroup?: string;
  readonly username?: string;
  readonly password?: string;
  readonly token?: string;
  /** The contents of a `.creds` file (JWT and nkey seed). */
  readonly creds?: string;
}

export interface JetStreamProperties extends NatsProperties {
  /** The JetStream stream to read. */
  readonly stream: string;
  /** The durable consumer's name (created when missing); default `tributary_<source name>`. */
  readonly durableName: string;
  readonly deliverPolicy: NatsDeliverPolicy;
  /** Messages fetched (and committed) per batch. */
  readonly batchSize: number;
}

const bad = (property: string, detail: string) => err('SOURCE_BAD_PROPERTY', { property, detail });

const COMMON = ['url', 'subject', 'data_type', 'queue_group', 'username', 'password', 'token', 'creds'];
const JETSTREAM = ['stream', 'durable_name', 'consumer', 'deliver_policy', 'batch_size'];

function optString(p: Record<string, unknown>, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw bad(`properties.${key}`, 'expected a string');
  return v;
}

function reqString(p: Record<string, unknown>, key: string, what: string): string {
  const v = optString(p, key);
  if (v === undefined) throw bad(`properties.${key}`, `required: ${what}`);
  return v;
}

/** Properties of a `nats` source (and the common part of `nats_jetstream`). */
export function natsProperties(p: Record<string, unknown>, jetstream = false): NatsProperties {
  const known = jetstream ? [...COMMON, ...JETSTREAM] : COMMON;
  for (const k of Object.keys(p))
    if (!known.includes(k))
      throw bad(
        `properties.${k}`,
        `unknown property of a ${jetstream ? 'nats_jetstream' : 'nats'} source (known: ${known.join(', ')})`,
      );
  const url = reqString(p, 'url', 'the server URL, e.g. nats://127.0.0.1:4222 (several: comma-separated)');
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const s of servers) {
    let u: URL;
    try {
      u = new URL(s.includes('://') ? s : `nats://${s}`);
    } catch {
      throw bad('properties.url', `not a URL: ${s}`);
    }
    if (!['nats:', 'tls:'].includes(u.protocol))
      throw bad('properties.url', `expected nats:// or tls://, got ${s}`);
  }
  const subject = jetstream
    ? (optString(p, 'subject') ?? '')
    : reqString(p, 'subject', 'the subject to read, e.g. events.>');
  const dataType = (optString(p, 'data_type') ?? 'json') as NatsDataType;
  if (!['json', 'text'].includes(dataType)) throw bad('properties.data_type', "expected 'json' or 'text'");
  const username = optString(p, 'username');
  const password = optString(p, 'password');
  if ((username === undefined) !== (password === undefined))
    throw bad(
      username === undefined ? 'properties.username' : 'properties.password',
      'username and password go together',
    );
  const token = optString(p, 'token');
  const creds = optString(p, 'creds');
  const queueGroup = optString(p, 'queue_group');
  return {
    servers,
    subject,
    dataType,
    ...(queueGroup ? { queueGroup } : {}),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(token ? { token } : {}),
    ...(creds ? { creds } : {}),
  };
}

/** Properties of a `nats_jetstream` source. */
export function jetStreamProperties(p: Record<string, unknown>, sourceName: string): JetStreamProperties {
  const base = natsProperties(p, true);
  const stream = reqString(p, 'stream', 'the JetStream stream to read');
  const durableName = optString(p, 'durable_name') ?? optString(p, 'consumer') ?? `tributary_${sourceName}`;
  if (!/^[A-Za-z0-9_-]+$/.test(durableName))
    throw bad('properties.durable_name', 'letters, digits, - and _ only');
  const deliverPolicy = (optString(p, 'deliver_policy') ?? 'all') as NatsDeliverPolicy;
  if (!['all', 'new', 'last'].includes(deliverPolicy))
    throw bad('properties.deliver_policy', "expected 'all', 'new' or 'last'");
  const batch = p.batch_size ?? 1000;
  if (typeof batch !== 'number' || !Number.isInteger(batch) || batch < 1 || batch > 10_000)
    throw bad('properties.batch_size', 'an integer from 1 to 10000');
  return { ...base, stream, durableName, deliverPolicy, batchSize: batch };
}
