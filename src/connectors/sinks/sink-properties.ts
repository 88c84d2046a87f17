import { err } from '../../errors/tributary-error.ts';
import type { Delivery, RetryBackoff } from './delivery.ts';
import { IDEMPOTENCY_HEADER } from './delivery.ts';
import { redactUrl } from './http-request.ts';
import { fillTemplate, jsonLines, rowObject, templateColumns } from './row-payload.ts';

/** Sink types (docs/api.md, "Sinks"). */
export const SINK_TYPES = ['http', 'slack'] as const;
export type SinkType = (typeof SINK_TYPES)[number];

const bad = (property: string, detail: string) => err('SINK_BAD_PROPERTY', { property, detail });

/** What a sink's properties make: how to deliver, and how long to wait between attempts. */
export interface SinkDelivery {
  delivery: Delivery;
  backoff: RetryBackoff;
  /** Columns its templates use (checked against the query's columns at create). */
  templateColumns: string[];
}

export function checkSinkType(type: unknown): SinkType {
  if (typeof type !== 'string' || !(SINK_TYPES as readonly string[]).includes(type))
    throw bad('type', `expected one of ${SINK_TYPES.join(', ')}; got ${JSON.stringify(type)}`);
  return type as SinkType;
}

const HTTP_KEYS = [
  'url',
  'http_method',
  'content_type',
  'headers',
  'body_template',
  'batch_size',
  'timeout_ms',
  'min_interval_ms',
  'retry_backoff_ms',
  'retry_backoff_max_ms',
];
const SLACK_KEYS = [
  'url',
  'messages',
  'timeout_ms',
  'min_interval_ms',
  'retry_backoff_ms',
  'retry_backoff_max_ms',
];

/** Check a sink's properties (a 400 naming the first wrong one) and build its delivery. */
export function sinkDelivery(type: SinkType, properties: unknown): SinkDelivery {
  if (
    properties === undefined ||
    typeof properties !== 'object' ||
    properties === null ||
    Array.isArray(properties)
  )
    throw bad('properties', 'expected an object');
  const p = properties as Record<string, unknown>;
  const known = type === 'http' ? HTTP_KEYS : SLACK_KEYS;
  for (const k of Object.keys(p))
    if (!known.includes(k))
      throw bad(`properties.${k}`, `unknown property of a ${type} sink (known: ${known.join(', ')})`);
  const url = httpUrl(p.url, 'properties.url');
  const timeoutMs = int(p.timeout_ms, 'properties.timeout_ms', 10_000, 1, 600_000);
  const backoff: RetryBackoff = {
    baseMs: int(p.retry_backoff_ms, 'properties.retry_backoff_ms', 500, 1, 3_600_000),
    maxMs: int(p.retry_backoff_max_ms, 'properties.retry_backoff_max_ms', 30_000, 1, 3_600_000),
  };
  if (type === 'slack') {
    const messages = optionalString(p.messages, 'properties.messages');
    const minIntervalMs = int(p.min_interval_ms, 'properties.min_interval_ms', 1000, 0, 3_600_000);
    return {
      backoff,
      templateColumns: messages ? templateColumns(messages) : [],
      delivery: {
        describe: `slack sink → ${redactUrl(url)}`,
        batchSize: 1,
        minIntervalMs,
        request: (columns, rows) => {
          const row = rowObject(columns, rows[0] as string);
          const text = messages ? fillTemplate(messages, row) : jsonLines(columns, rows).trimEnd();
          return {
            url,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ text }),
            timeoutMs,
          };
        },
      },
    };
  }
  const method = optionalString(p.http_method, 'properties.http_method')?.toUpperCase() ?? 'POST';
  if (!['POST', 'PUT', 'PATCH'].includes(method))
    throw bad('properties.http_method', `expected POST, PUT or PATCH; got ${JSON.stringify(p.http_method)}`);
  const template = optionalString(p.body_template, 'properties.body_template');
  const contentType =
    optionalString(p.content_type, 'properties.content_type') ??
    (template ? 'application/json' : 'application/x-ndjson');
  const headers = headerMap(p.headers, 'properties.headers');
  const batchSize = int(p.batch_size, 'properties.batch_size', 1000, 1, 100_000);
  const minIntervalMs = int(p.min_interval_ms, 'properties.min_interval_ms', 0, 0, 3_600_000);
  return {
    backoff,
    templateColumns: template ? templateColumns(template) : [],
    delivery: {
      describe: `http sink → ${redactUrl(url)}`,
      batchSize,
      minIntervalMs,
      request: (columns, rows, key) => ({
        url,
        method,
        headers: { ...headers, 'content-type': contentType, [IDEMPOTENCY_HEADER]: key },
        body: template
          ? rows.map((r) => fillTemplate(template, rowObject(columns, r))).join('\n')
          : jsonLines(columns, rows),
        timeoutMs,
      }),
    },
  };
}

/** Properties as GET shows them: header values that look like credentials are masked. */
export function maskedProperties(properties: Record<string, unknown>): Record<string, unknown> {
  const headers = properties.headers;
  if (!headers || typeof headers !== 'object') return properties;
  const masked: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headers as Record<string, unknown>))
    masked[k] = /authorization|token|secret|password|api[-_]?key/i.test(k) ? '******' : v;
  return { ...properties, headers: masked };
}

export function httpUrl(v: unknown, property: string): string {
  if (typeof v !== 'string' || v.length === 0)
    throw bad(property, 'required: the receiver’s http:// or https:// URL');
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw bad(property, 'not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw bad(property, `expected an http:// or https:// URL; got ${u.protocol}`);
  return v;
}

function optionalString(v: unknown, property: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw bad(property, `expected a string; got ${JSON.stringify(v)}`);
  return v;
}

function int(v: unknown, property: string, dflt: number, min: number, max: number): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw bad(property, `expected an integer from ${min} to ${max}; got ${JSON.stringify(v)}`);
  return v;
}

function headerMap(v: unknown, property: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v))
    throw bad(property, 'expected an object of header names to string values');
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v as Record<string, unknown>)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) throw bad(`${property}.${k}`, 'not a valid header name');
    if (typeof value !== 'string')
      throw bad(`${property}.${k}`, `expected a string; got ${JSON.stringify(value)}`);
    out[k] = value;
  }
  return out;
}
