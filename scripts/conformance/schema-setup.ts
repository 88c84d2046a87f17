// Streams of a suite's `table_schemas`. The original runner created them through the original
// server's REST DDL route with a body `{name, columns: [{name, type, default}], event_time_column,
// ttl_expression, mode, primary_key, shards, ...}`; here the same body becomes a Proton
// `CREATE STREAM` statement sent through POST /v1beta2/queries. Entries of type `view` run their
// `create_sql`. Before each case, the streams its inputs write to are reset exactly as the original
// did (see resetInputStreams).

import type { StepItem, TableSchema } from './case-file.ts';

/** Keys of a schema entry that are not stream settings. */
const NOT_SETTINGS = new Set([
  'name',
  'type',
  'columns',
  'primary_key',
  'order_by_expression',
  'order_by_granularity',
  'partition_by_expression',
  'partition_by_granularity',
  'ttl_expression',
  'query_parameters',
  'reset',
  'create_sql',
  'description',
]);

/** Schema keys passed on as SETTINGS (others are ignored). */
const SETTING_KEYS = new Set([
  'event_time_column',
  'mode',
  'shards',
  'replication_factor',
  'storage_type',
  'logstore_retention_bytes',
  'logstore_retention_ms',
  'version_column',
  'keep_versions',
]);

/** An identifier, back-quoted unless it is a plain one. */
export function quoteIdent(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? name
    : `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

function settingValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const s = String(v);
  if (/^-?\d+$/.test(s)) return s;
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function columnSql(c: Record<string, unknown>): string {
  let type = String(c.type ?? 'string');
  if (c.nullable === true && !/^nullable\s*\(/i.test(type)) type = `nullable(${type})`;
  let sql = `${quoteIdent(String(c.name))} ${type}`;
  if (c.default !== undefined && c.default !== null && c.default !== '')
    sql += ` DEFAULT ${String(c.default)}`;
  else if (c.alias !== undefined && c.alias !== null && c.alias !== '') sql += ` ALIAS ${String(c.alias)}`;
  if (c.compression_codec) sql += ` CODEC(${String(c.compression_codec)})`;
  if (c.comment) sql += ` COMMENT ${settingValue(String(c.comment))}`;
  return sql;
}

function wrapList(v: unknown): string {
  if (Array.isArray(v)) return `(${v.map((x) => quoteIdent(String(x))).join(', ')})`;
  const s = String(v).trim();
  return s.startsWith('(') ? s : `(${s})`;
}

/** CREATE STREAM for a schema entry (or a `POST /proton/v1/ddl/streams` body). */
export function createStreamSql(schema: Record<string, unknown>): string {
  const name = String(schema.name);
  const columns = Array.isArray(schema.columns) ? (schema.columns as Record<string, unknown>[]) : [];
  let sql = `CREATE STREAM ${quoteIdent(name)} (${columns.map(columnSql).join(', ')})`;
  if (schema.primary_key) sql += ` PRIMARY KEY ${wrapList(schema.primary_key)}`;
  if (schema.order_by_expression) sql += ` ORDER BY ${String(schema.order_by_expression)}`;
  if (schema.partition_by_expression) sql += ` PARTITION BY ${String(schema.partition_by_expression)}`;
  if (schema.ttl_expression) sql += ` TTL ${String(schema.ttl_expression)}`;
  const settings: string[] = [];
  for (const [k, v] of Object.entries(schema)) {
    if (NOT_SETTINGS.has(k) || !SETTING_KEYS.has(k) || v === undefined || v === null || v === '') continue;
    settings.push(`${k}=${settingValue(v)}`);
  }
  // the REST route's query parameters (e.g. `storage_type=streaming`) are stream settings too
  if (typeof schema.query_parameters === 'string') {
    for (const [k, v] of new URLSearchParams(schema.query_parameters)) {
      if (k && !settings.some((s) => s.startsWith(`${k}=`))) settings.push(`${k}=${settingValue(v)}`);
    }
  }
  if (settings.length > 0) sql += ` SETTINGS ${settings.join(', ')}`;
  return sql;
}

export function dropStreamSql(name: string): string {
  return `DROP STREAM IF EXISTS ${quoteIdent(name)}`;
}

export function dropViewSql(name: string): string {
  return `DROP VIEW IF EXISTS ${quoteIdent(name)}`;
}

/** The statements that (re)create one schema entry: drop if exists, then create. */
export function recreateStatements(schema: TableSchema): string[] {
  const type = String(schema.type ?? 'table');
  if (type === 'view') {
    const create = typeof schema.create_sql === 'string' ? [schema.create_sql] : [];
    return [dropViewSql(schema.name), ...create];
  }
  return [dropStreamSql(schema.name), createStreamSql(schema)];
}

function isResetDisabled(schema: TableSchema | undefined): boolean {
  return schema !== undefined && String(schema.reset) === 'False';
}

/**
 * What the original runner did at the start of every case (reset_tables_of_test_inputs): walking
 * the case's inputs in order, the first input stream not yet handled is dropped, and when the suite
 * has table_schemas the matching one is created again; after that first reset every schema name
 * counts as handled. So with table_schemas only the first input stream is reset (others keep their
 * data, e.g. a dimension stream filled by the suite's setup); without table_schemas every input
 * stream is dropped (the case's own statements create it again).
 */
export function resetPlan(
  inputs: readonly StepItem[],
  schemas: readonly TableSchema[] | undefined,
): string[] {
  const sql: string[] = [];
  const handled = new Set<string>();
  const dropped = new Set<string>();
  for (const input of inputs) {
    const table = input.table_name === undefined ? undefined : String(input.table_name);
    if (table === undefined || handled.has(table) || dropped.has(table)) continue;
    const schema = schemas?.find((s) => s.name === table);
    if (isResetDisabled(schema)) continue;
    sql.push(dropStreamSql(table));
    dropped.add(table);
    if (schemas) {
      for (const s of schemas) {
        handled.add(s.name);
        if (s.name === table) sql.push(...recreateStatements(s).slice(1));
      }
    }
  }
  return sql;
}
