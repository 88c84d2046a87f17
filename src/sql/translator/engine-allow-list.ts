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
 * - query settings (`SETTINGS` clause, `SET`): Proton's own query settings (dropped or interpreted
 *   by Tributary, see proton-settings.ts) and the engine settings of query-setting-policy.ts (plan
 *   and formatting knobs, checks, limits only lowered). `readonly`, limits raised, `allow_*` that
 *   open a feature and every setting not listed are refused.
 *
 * Every refusal is an error naming the function, table or setting and its SQL position.
 * Administrators are refused too: Tributary's own resources (streams, views, external streams and
 * tables) are the documented way to reach data outside the engine.
 */
import { err } from '../../errors/tributary-error.ts';
import type { Span } from '../ast/span.ts';

export { checkQuerySetting, isAllowedQuerySetting } from './query-setting-policy.ts';

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
