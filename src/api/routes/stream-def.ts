import { quoteString } from '../../engine/settings-clause.ts';
import { err } from '../../errors/tributary-error.ts';
import type { ColumnSpec, ExprInput, IndexSpec, StreamSpec } from '../../stream/define-stream.ts';
import { isPlainIdentifier } from '../../stream/sql-text.ts';
import type { SqlExpr } from '../../stream/stream-definition.ts';
import { checkFieldArguments, fieldExpr } from './field-expr.ts';

/** The StreamDef body of POST /v1beta2/streams (openapi-v1beta2-with-create.json). */
export interface StreamDefBody {
  name: string;
  description?: string;
  columns?: Array<{
    name: string;
    type: string;
    default?: string;
    codec?: string;
    comment?: string;
    ttl_expression?: string;
    skipping_index_expression?: string;
  }>;
  engine?: string;
  event_time_column?: string;
  event_time_timezone?: string;
  logstore_retention_bytes?: number;
  logstore_retention_ms?: number;
  mode?: string;
  order_by_expression?: string;
  order_by_granularity?: string;
  partition_by_granularity?: string;
  primary_key?: string;
  replication_factor?: number;
  shards?: number;
  ttl_expression?: string;
  column_families?: unknown[];
  secondary_indexes?: unknown[];
}

/** Granularity letters of the REST contract: Proton and engine spellings of the time bucket. */
const ORDER_GRANULARITY: Record<string, readonly [string, string]> = {
  s: ['to_start_of_second', 'toStartOfSecond'],
  m: ['to_start_of_minute', 'toStartOfMinute'],
  h: ['to_start_of_hour', 'toStartOfHour'],
  H: ['to_start_of_hour', 'toStartOfHour'],
  d: ['to_start_of_day', 'toStartOfDay'],
  D: ['to_start_of_day', 'toStartOfDay'],
  w: ['to_start_of_week', 'toStartOfWeek'],
  W: ['to_start_of_week', 'toStartOfWeek'],
  M: ['to_start_of_month', 'toStartOfMonth'],
  y: ['to_start_of_year', 'toStartOfYear'],
  Y: ['to_start_of_year', 'toStartOfYear'],
};

const PARTITION_GRANULARITY: Record<string, readonly [string, string]> = {
  h: ['to_start_of_hour', 'toStartOfHour'],
  H: ['to_start_of_hour', 'toStartOfHour'],
  d: ['to_YYYYMMDD', 'toYYYYMMDD'],
  D: ['to_YYYYMMDD', 'toYYYYMMDD'],
  w: ['to_start_of_week', 'toStartOfWeek'],
  W: ['to_start_of_week', 'toStartOfWeek'],
  M: ['to_YYYYMM', 'toYYYYMM'],
  y: ['to_year', 'toYear'],
  Y: ['to_year', 'toYear'],
};

const WORDS: Record<string, string> = {
  second: 's',
  minute: 'm',
  hour: 'H',
  day: 'D',
  week: 'W',
  month: 'M',
  year: 'Y',
};

function bucket(
  table: Record<string, readonly [string, string]>,
  field: string,
  value: string | undefined,
): ExprInput | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  const names = table[WORDS[v.toLowerCase()] ?? v];
  if (!names) {
    throw err('INVALID_FIELD', {
      field,
      detail: `must be one of ${Object.keys(table).join(', ')} or ${Object.keys(WORDS).join(', ')}`,
    });
  }
  return { proton: `${names[0]}(_tp_time)`, engine: `${names[1]}(_tp_time)` };
}

function quoted(name: string): string {
  return isPlainIdentifier(name) ? name : '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

/** `event_time_column` (a column) and `event_time_timezone` as the DEFAULT of `_tp_time`. */
function eventTime(column: string | undefined, timezone: string | undefined): ExprInput | undefined {
  if (column === undefined || column.trim() === '') return undefined;
  const c = column.trim();
  const ref = /^[A-Za-z_][A-Za-z0-9_]*$|^`/.test(c) ? c : quoted(c);
  const inner = fieldExpr('event_time_column', ref);
  if (!timezone || timezone.trim() === '') return inner;
  const tz = quoteString(timezone.trim());
  return {
    proton: `to_datetime64(${inner.proton}, 3, ${tz})`,
    engine: `toDateTime64(${inner.engine}, 3, ${tz})`,
  };
}

/** A SQL fragment of the body, translated (FIELD_SYNTAX_ERROR naming `field`); undefined when blank. */
function optionalExpr(field: string, text: string | undefined): SqlExpr | undefined {
  return text === undefined || text.trim() === '' ? undefined : fieldExpr(field, text);
}

/** A codec as given (`ZSTD(1)` or `CODEC(ZSTD(1))`), checked to read as a codec list. */
function checkedCodec(field: string, codec: string | undefined): string | undefined {
  if (!codec || codec.trim() === '') return undefined;
  const m = /^codec\s*\(([\s\S]*)\)$/i.exec(codec.trim());
  checkFieldArguments(field, m ? (m[1] ?? '') : codec);
  return codec;
}

function skippingIndex(column: string, text: string | undefined, field: string): IndexSpec | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const m = /^([\s\S]*?)(?:\s+GRANULARITY\s+(\d+))?\s*$/i.exec(text.trim());
  const type = (m?.[1] ?? text).replace(/^TYPE\s+/i, '').trim();
  checkFieldArguments(field, type);
  const ref = quoted(column);
  return {
    name: `${column}_index`,
    expr: { proton: ref, engine: ref },
    type,
    granularity: Number(m?.[2] ?? 1),
  };
}

/** Turn a REST StreamDef into the StreamSpec the stream layer validates. */
export function streamSpecOf(body: StreamDefBody, db: string): StreamSpec {
  if (body.engine && body.engine !== 'Stream') {
    throw err('NOT_IMPLEMENTED', {
      detail: `engine ${body.engine} is not supported; streams use the Stream engine`,
    });
  }
  if ((body.column_families?.length ?? 0) > 0) {
    throw err('NOT_IMPLEMENTED', {
      detail: 'column_families exist only for mutable streams, which are not supported',
    });
  }
  if ((body.secondary_indexes?.length ?? 0) > 0) {
    throw err('NOT_IMPLEMENTED', {
      detail: 'secondary_indexes exist only for mutable streams, which are not supported',
    });
  }
  const columns: ColumnSpec[] = (body.columns ?? []).map((c, i) => {
    const dflt = optionalExpr(`columns[${i}].default`, c.default);
    const codec = checkedCodec(`columns[${i}].codec`, c.codec);
    const ttl = optionalExpr(`columns[${i}].ttl_expression`, c.ttl_expression);
    return {
      name: c.name,
      type: c.type,
      ...(dflt ? { default: dflt } : {}),
      ...(codec ? { codec } : {}),
      ...(c.comment ? { comment: c.comment } : {}),
      ...(ttl ? { ttl } : {}),
    };
  });
  const indexes = (body.columns ?? [])
    .map((c, i) =>
      skippingIndex(c.name, c.skipping_index_expression, `columns[${i}].skipping_index_expression`),
    )
    .filter((x): x is IndexSpec => x !== undefined);
  const orderBy =
    optionalExpr('order_by_expression', body.order_by_expression) ??
    bucket(ORDER_GRANULARITY, 'order_by_granularity', body.order_by_granularity);
  const partitionBy = bucket(
    PARTITION_GRANULARITY,
    'partition_by_granularity',
    body.partition_by_granularity,
  );
  const etc = body.event_time_column?.trim();
  if (etc && /^[A-Za-z_][A-Za-z0-9_]*$/.test(etc) && !(body.columns ?? []).some((c) => c.name === etc)) {
    throw err('INVALID_FIELD', {
      field: 'event_time_column',
      detail: `names no column of the stream (${etc})`,
    });
  }
  const eventTimeColumn = eventTime(body.event_time_column, body.event_time_timezone);
  const primaryKey = optionalExpr('primary_key', body.primary_key);
  const ttl = optionalExpr('ttl_expression', body.ttl_expression);
  return {
    db,
    name: body.name,
    columns,
    ...(indexes.length > 0 ? { indexes } : {}),
    ...(body.mode ? { mode: body.mode } : {}),
    ...(primaryKey ? { primaryKey } : {}),
    ...(orderBy ? { orderBy } : {}),
    ...(partitionBy ? { partitionBy } : {}),
    ...(ttl ? { ttl } : {}),
    ...(eventTimeColumn ? { eventTimeColumn } : {}),
    ...(body.logstore_retention_bytes !== undefined
      ? { logstoreRetentionBytes: body.logstore_retention_bytes }
      : {}),
    ...(body.logstore_retention_ms !== undefined ? { logstoreRetentionMs: body.logstore_retention_ms } : {}),
    ...(body.shards !== undefined ? { shards: body.shards } : {}),
    ...(body.replication_factor !== undefined ? { replicationFactor: body.replication_factor } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
  };
}
