import { err } from '../../errors/tributary-error.ts';
import { GENERATOR_TEMPLATES, type GeneratorTemplate } from './generator-templates.ts';
import { jetStreamProperties, natsProperties } from './nats-properties.ts';
import { webSocketProperties } from './websocket-properties.ts';

/** Source types the spec names (docs/api.md, "Sources"). */
export const SOURCE_TYPES = ['stream_generator', 'websocket', 'nats', 'nats_jetstream'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];
export const BUILT_SOURCE_TYPES: readonly SourceType[] = [...SOURCE_TYPES];

export interface StreamGeneratorProperties {
  readonly template: GeneratorTemplate;
  /** Events per second. */
  readonly eps: number;
}

const bad = (property: string, detail: string) => err('SOURCE_BAD_PROPERTY', { property, detail });

/** A Go-style duration (`200ms`, `1s`, `1.5m`) in milliseconds. */
export function parseDuration(text: string, property: string): number {
  const m = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw bad(property, `expected a duration such as 200ms, 1s or 10m; got ${JSON.stringify(text)}`);
  const unit: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
    d: 86_400_000,
  };
  return Number(m[1]) * (unit[m[2] as string] as number);
}

export function checkType(type: unknown): SourceType {
  if (typeof type !== 'string' || !(SOURCE_TYPES as readonly string[]).includes(type))
    throw bad('type', `expected one of ${SOURCE_TYPES.join(', ')}; got ${JSON.stringify(type)}`);
  if (!BUILT_SOURCE_TYPES.includes(type as SourceType))
    throw err('NOT_IMPLEMENTED', { detail: `Sources of type ${type} are not supported yet` });
  return type as SourceType;
}

/**
 * The properties of a `stream_generator` source: `template` (iot, user_logins, devops) and the
 * rate, as `eps` (events per second) or Timeplus's `interval` (one event every interval, `200ms`
 * by default). Unknown properties are refused by name.
 */
export function streamGeneratorProperties(p: Record<string, unknown>): StreamGeneratorProperties {
  for (const k of Object.keys(p)) {
    if (!['template', 'eps', 'interval'].includes(k))
      throw bad(
        `properties.${k}`,
        'unknown property of a stream_generator source (known: template, eps, interval)',
      );
  }
  const template = p.template;
  if (typeof template !== 'string' || !(GENERATOR_TEMPLATES as readonly string[]).includes(template))
    throw bad(
      'properties.template',
      `expected one of ${GENERATOR_TEMPLATES.join(', ')}; got ${JSON.stringify(template)}`,
    );
  let eps = 5;
  if (p.eps !== undefined) {
    if (typeof p.eps !== 'number' || !(p.eps > 0) || p.eps > 1_000_000)
      throw bad(
        'properties.eps',
        `expected a number of events per second from 0 to 1000000; got ${JSON.stringify(p.eps)}`,
      );
    eps = p.eps;
  } else if (p.interval !== undefined) {
    if (typeof p.interval !== 'string')
      throw bad('properties.interval', 'expected a duration string such as 200ms');
    const ms = parseDuration(p.interval, 'properties.interval');
    if (ms <= 0) throw bad('properties.interval', 'must be positive');
    eps = 1000 / ms;
  }
  return { template: template as GeneratorTemplate, eps };
}

/** Check the properties of `type` (`sourceName` gives JetStream's default consumer name). */
export function checkProperties(
  type: SourceType,
  properties: unknown,
  sourceName: string,
): Record<string, unknown> {
  if (
    properties !== undefined &&
    (typeof properties !== 'object' || properties === null || Array.isArray(properties))
  )
    throw bad('properties', 'expected an object');
  const p = (properties ?? {}) as Record<string, unknown>;
  switch (type) {
    case 'stream_generator':
      streamGeneratorProperties(p);
      return p;
    case 'nats':
      natsProperties(p);
      return p;
    case 'websocket':
      webSocketProperties(p);
      return p;
    case 'nats_jetstream':
      jetStreamProperties(p, sourceName);
      return p;
    default:
      throw err('NOT_IMPLEMENTED', { detail: `Sources of type ${type} are not supported yet` });
  }
}
