/**
 * What user SQL may reach in the engine (the translator's half of the engine allow-list; the
 * engine's half is the `readonly = 1` the user-SQL paths add, see docs/operations.md, "What user
 * SQL may reach").
 *
 * The embedded engine runs as one all-powerful user in clickhouse-local mode: `file()` reads any
 * path of the host (the data directory with its password file, catalog and WAL included), `url()`
 * and friends reach any address, `executable()` runs programs, and query settings lift every
 * limit. User SQL therefore reaches only what is listed here:
 *
 * - table functions: Proton's own (table, tumble, hop, session, dedup, changelog; handled by the
 *   translator before this list is asked) and the pure generators below. Anything else is refused
 *   (an allow-list: a function added by an engine upgrade stays closed).
 * - system tables: the read-only metadata below (`system.processes` for query monitoring) and the
 *   `information_schema` views. Users, grants, server settings, disks, logs stay closed.
 * - scalar functions: a deny-list (the function map is generated and large) of the ones that read
 *   files, reach the network or other processes, or reveal the server's configuration.
 * - query settings (`SETTINGS` clause): Proton's own query settings (dropped or interpreted by
 *   Tributary, see proton-settings.ts) and the harmless engine settings below (threads, join
 *   algorithm, output formatting). Limits (memory, time, rows), `readonly`, `allow_*` and every
 *   setting not listed are refused.
 *
 * Every refusal is an error naming the function, table or setting and its SQL position.
 * Administrators are refused too: Tributary's own resources (streams, views, external streams and
 * tables) are the documented way to reach data outside the engine.
 */
import { err } from '../../errors/tributary-error.ts';
import type { Span } from '../ast/span.ts';

/** Engine table functions user SQL may call (engine spelling; Proton's own are handled before). */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  'numbers',
  'numbers_mt',
  'generateRandom',
  'generateSeries',
  'generate_series',
  'values',
]);

/** `system.<name>` tables user SQL may read: metadata and the running queries, nothing secret. */
export const ALLOWED_SYSTEM_TABLES: ReadonlySet<string> = new Set([
  'one',
  'numbers',
  'numbers_mt',
  'processes',
  'databases',
  'tables',
  'columns',
  'functions',
  'table_functions',
  'aggregate_function_combinators',
  'data_type_families',
  'formats',
  'time_zones',
  'collations',
  'contributors',
  'licenses',
]);

/** Engine databases whose every table is harmless metadata (views over the allowed system tables). */
const OPEN_ENGINE_DATABASES: ReadonlySet<string> = new Set(['information_schema']);

/**
 * Scalar functions user SQL may not call (engine spelling): they read files, reach the network,
 * other processes or dictionaries' raw sources, or reveal the server's configuration.
 */
export const DENIED_FUNCTIONS: ReadonlySet<string> = new Set([
  'file',
  'url',
  'remote',
  'executable',
  'catboostEvaluate',
  'naiveBayesClassifier',
  'getServerSetting',
  'getMergeTreeSetting',
  'getMacro',
  'getClientHTTPHeader',
  'filesystemAvailable',
  'filesystemCapacity',
  'filesystemUnreserved',
  'generateSerialID',
  'joinGet',
  'joinGetOrNull',
  'dictGet',
  'dictGetAll',
  'dictGetChildren',
  'dictGetDescendants',
  'dictGetHierarchy',
  'dictGetKeys',
  'dictGetOrDefault',
  'dictGetOrNull',
  'dictGetRoot',
  'dictHas',
  'dictIsIn',
]);

/** Typed dictGet variants (`dictGetString`, `dictGetUInt64OrDefault`, ...). */
const DICT_GET_TYPED = /^dictget[a-z0-9]+(ordefault)?$/i;

/**
 * Engine settings a query's SETTINGS clause may carry: performance knobs that cannot lift a limit,
 * join and aggregation semantics, and output formatting. Limits, `readonly`, `allow_*`,
 * file/network settings and everything else are refused.
 */
export const ALLOWED_QUERY_SETTINGS: ReadonlySet<string> = new Set([
  'max_threads',
  'max_insert_threads',
  'max_block_size',
  'join_algorithm',
  'join_use_nulls',
  'any_join_distinct_right_table_keys',
  'join_default_strictness',
  'union_default_mode',
  'aggregate_functions_null_for_empty',
  'count_distinct_implementation',
  'transform_null_in',
  'cast_keep_nullable',
  'data_type_default_nullable',
  'prefer_column_name_to_alias',
  'joined_subquery_requires_alias',
  'enable_optimize_predicate_expression',
  'optimize_move_to_prewhere',
  'session_timezone',
  'date_time_output_format',
  'date_time_input_format',
  'precise_float_parsing',
  'output_format_json_quote_64bit_integers',
  'output_format_json_quote_denormals',
  'output_format_decimal_trailing_zeros',
  'decimal_check_overflow',
  'extremes',
  'final',
]);

function position(span: Span | undefined): string {
  return span ? ` (at position ${span.start + 1})` : '';
}

/** Refuse an engine table function that is not on the allow-list. */
export function checkTableFunction(engineName: string, written: string, span?: Span): void {
  if (ALLOWED_TABLE_FUNCTIONS.has(engineName)) return;
  throw err('ENGINE_ACCESS_DENIED', {
    what: 'table function',
    name: written,
    position: position(span),
    reason:
      'user SQL may not read files, URLs, other servers or programs through the engine (see docs/operations.md, "What user SQL may reach")',
  });
}

/** Refuse an engine table (`system.users`, ...) that is not on the allow-list. */
export function checkEngineTable(database: string, name: string, span?: Span): void {
  const db = database.toLowerCase();
  if (OPEN_ENGINE_DATABASES.has(db)) return;
  if (db === 'system' && ALLOWED_SYSTEM_TABLES.has(name.toLowerCase())) return;
  throw err('ENGINE_ACCESS_DENIED', {
    what: 'table',
    name: `${database}.${name}`,
    position: position(span),
    reason: `user SQL may read only these system tables: ${[...ALLOWED_SYSTEM_TABLES].join(', ')}`,
  });
}

/** Whether user SQL may call the engine function `engineName`. */
export function isDeniedFunction(engineName: string): boolean {
  return DENIED_FUNCTIONS.has(engineName) || DICT_GET_TYPED.test(engineName);
}

/** Refuse a scalar function that reads files, the network, processes or the server's configuration. */
export function checkFunction(engineName: string, written: string, span?: Span): void {
  if (!isDeniedFunction(engineName)) return;
  throw err('ENGINE_ACCESS_DENIED', {
    what: 'function',
    name: written,
    position: position(span),
    reason: 'it reads files, reaches the network or reveals the server; user SQL may not call it',
  });
}

/** Whether a query may set the engine setting `name` (Proton's own settings are checked before). */
export function isAllowedQuerySetting(name: string): boolean {
  const lower = name.toLowerCase();
  return ALLOWED_QUERY_SETTINGS.has(lower) || lower.startsWith('output_format_pretty_');
}

/** Refuse a query setting that is not on the allow-list. */
export function checkQuerySetting(name: string, span?: Span): void {
  if (isAllowedQuerySetting(name)) return;
  throw err('SETTING_NOT_ALLOWED', {
    name,
    position: position(span),
    allowed: [...ALLOWED_QUERY_SETTINGS].join(', '),
  });
}
