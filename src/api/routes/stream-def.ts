import { quoteString } from '../../engine/settings-clause.ts';
import { err } from '../../errors/tributary-error.ts';
import type { ColumnSpec, ExprInput, IndexSpec, StreamSpec } from '../../stream/define-stream.ts';
import { isPlainIdentifier } from '../../stream/sql-text.ts';

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
  if (!timezone || timezone.trim() === '') return ref;
  const tz = quoteString(timezone.trim());
  return { proton: `to_datetime64(${ref}, 3, ${tz})`, engine: `toDateTime64(${ref}, 3, ${tz})` };
}

function skippingIndex(column: string, text: string | undefined): IndexSpec | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const m = /^([\s\S]*?)(?:\s+GRANULARITY\s+(\d+))?\s*$/i.exec(text.trim());
  const type = (m?.[1] ?? text).replace(/^TYPE\s+/i, '').trim();
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
  const columns: ColumnSpec[] = (body.columns ?? []).map((c) => ({
    name: c.name,
    type: c.type,
    ...(c.default !== undefined && c.default !== '' ? { default: c.default } : {}),
    ...(c.codec ? { codec: c.codec } : {}),
    ...(c.comment ? { comment: c.comment } : {}),
    ...(c.ttl_expression ? { ttl: c.ttl_expression } : {}),
  }));
  const indexes = (body.columns ?? [])
    .map((c) => skippingIndex(c.name, c.skipping_index_expression))
    .filter((x): x is IndexSpec => x !== undefined);
  const orderBy = body.order_by_expression?.trim()
    ? body.order_by_expression
    : bucket(ORDER_GRANULARITY, 'order_by_granularity', body.order_by_granularity);
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
  return {
    db,
    name: body.name,
    columns,
    ...(indexes.length > 0 ? { indexes } : {}),
    ...(body.mode ? { mode: body.mode } : {}),
    ...(body.primary_key?.trim() ? { primaryKey: body.primary_key } : {}),
    ...(orderBy ? { orderBy } : {}),
    ...(partitionBy ? { partitionBy } : {}),
    ...(body.ttl_expression?.trim() ? { ttl: body.ttl_expression } : {}),
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
