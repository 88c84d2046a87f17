/**
 * Which engine settings a query may carry (its `SETTINGS` clause, or a `SET` earlier in the same
 * request): the settings half of the engine allow-list (engine-allow-list.ts; docs/operations.md,
 * "What user SQL may reach"; docs/sql-reference.md, "Engine settings a query may carry").
 *
 * The rule (issue 1): limits, `readonly`, `allow_*` switches that open a feature and every door to
 * files, the network, programs, other servers or the server's configuration stay as the server set
 * them. A setting is allowed only when what it does is one of the kinds below, decided from the
 * engine's documentation of the setting, never from whether some query needs it:
 *
 * - it chooses a plan, an optimisation or how execution is cut into threads and blocks (the result
 *   is the same, or the query's own semantics are chosen, as with join_use_nulls);
 * - it shapes how results are formatted or input is parsed (`output_format_*`, `input_format_*`);
 * - it is a check that can only make the query fail (`force_primary_key`, ...);
 * - it switches off a check of types or syntax and opens no access (`allow_suspicious_*`), or is an
 *   obsolete no-op the engine still accepts;
 * - it is a limit, and the query only tightens it (a positive value no higher than the server's).
 *
 * Everything else, unknown names included, is refused with SETTING_NOT_ALLOWED (164): an
 * allow-list, so a setting an engine upgrade adds stays closed until someone reads what it does.
 */

import { err } from '../../errors/tributary-error.ts';
import type { Expr, Setting } from '../ast/expression.ts';
import type { Span } from '../ast/span.ts';

/** Plan and optimisation choices: the same rows come back, computed another way. */
const PLAN = [
  'compile_expressions', // JIT-compile expressions (and the next three: aggregates, sorts)
  'compile_aggregate_expressions',
  'compile_sort_description',
  'min_count_to_compile_expression',
  'min_count_to_compile_aggregate_expression',
  'min_count_to_compile_sort_description',
  'convert_query_to_cnf', // rewrite WHERE into conjunctive normal form
  'cross_to_inner_join_rewrite', // `FROM a, b WHERE a.x = b.x` as an inner join
  'enable_optimize_predicate_expression', // push predicates into subqueries
  'enable_optimize_predicate_expression_to_final_subquery',
  'enable_multiple_prewhere_read_steps',
  'group_by_two_level_threshold', // when aggregation switches to a two-level hash table
  'group_by_two_level_threshold_bytes',
  'use_skip_indexes', // use data-skipping indexes
  'use_skip_indexes_if_final',
  'use_index_for_in_with_subqueries', // use the primary key for `IN (subquery)`
  'use_uncompressed_cache',
  'short_circuit_function_evaluation',
  'max_bytes_before_remerge_sort', // when an ORDER BY ... LIMIT merges its blocks in memory (no disk)
  'remerge_sort_lowered_memory_bytes_ratio',
  'aggregation_in_order_max_block_bytes',
  'do_not_merge_across_partitions_select_final',
  'partial_merge_join_rows_in_right_blocks', // block sizes of the partial-merge join
  'partial_merge_join_left_table_buffer_bytes',
  'allow_aggregate_partitions_independently',
  'allow_execute_multiif_columnar',
  'allow_simdjson', // which JSON parser library the JSON* functions use
  'allow_hyperscan', // its default is on; a query may only switch the Hyperscan functions off
];

/** How execution is cut into threads and blocks: cost, not results, and no limit. */
const EXECUTION = [
  'max_threads',
  'max_final_threads',
  'max_insert_threads',
  'max_block_size',
  'max_joined_block_size_rows',
  'preferred_block_size_bytes',
  'preferred_max_column_in_block_size_bytes',
  'min_insert_block_size_rows',
  'min_insert_block_size_bytes',
  'max_insert_block_size',
  'max_read_buffer_size', // the size of a read buffer (the engine caps it at 256 MiB)
  'join_algorithm',
];

/** The query's own semantics: what its joins, aggregates, casts and functions mean. */
const SEMANTICS = [
  'join_use_nulls',
  'any_join_distinct_right_table_keys',
  'join_default_strictness',
  'join_any_take_last_row',
  'union_default_mode',
  'aggregate_functions_null_for_empty',
  'empty_result_for_aggregation_by_empty_set',
  'count_distinct_implementation',
  'transform_null_in',
  'cast_keep_nullable',
  'cast_ipv4_ipv6_default_on_conversion_error',
  'data_type_default_nullable',
  'prefer_column_name_to_alias',
  'joined_subquery_requires_alias',
  'enable_global_with_statement', // WITH at the top reaches subqueries and union members
  'enable_positional_arguments', // GROUP BY 1, ORDER BY 2
  'enable_unaligned_array_join',
  'enable_extended_results_for_datetime_functions',
  'formatdatetime_parsedatetime_m_is_month_name',
  'formatdatetime_f_prints_single_zero',
  'parsedatetime_parse_without_leading_zeros',
  'session_timezone',
  'decimal_check_overflow',
  'totals_mode',
  'totals_auto_threshold',
  'extremes',
  'final',
  'limit', // a LIMIT / OFFSET applied to the query's result: its own rows, fewer of them
  'offset',
  // What happens when a limit is reached (throw, or stop and return what was read). Every limit
  // these govern is unlimited on Tributary's sessions, so they act only on a limit the query
  // itself set. The timeout's mode (timeout_overflow_mode) stays refused: Tributary sets that limit.
  'read_overflow_mode',
  'result_overflow_mode',
  'group_by_overflow_mode',
  'sort_overflow_mode',
  'set_overflow_mode',
  'join_overflow_mode',
  'distinct_overflow_mode',
  'transfer_overflow_mode',
];

/** How results are written and input is read (besides the `output_format_*` / `input_format_*` kinds). */
const FORMATTING = [
  'date_time_output_format',
  'date_time_input_format',
  'precise_float_parsing',
  'bool_true_representation',
  'bool_false_representation',
];

/** Checks that can only make the query fail: they add a condition, they open nothing. */
const CHECKS = [
  'force_primary_key',
  'force_index_by_date',
  'force_data_skipping_indices',
  'force_optimize_projection',
  'force_optimize_projection_name',
  'check_query_single_value_result', // CHECK TABLE answers one row instead of one per part
  'validate_polygons', // whether pointInPolygon checks its polygon (off: no check, same access)
];

/**
 * Switches that only turn off a check of types, keys or syntax in what the statement itself
 * declares or calls; none opens a function, engine or path that is closed otherwise.
 */
const TYPE_CHECKS = [
  'allow_suspicious_low_cardinality_types',
  'allow_suspicious_fixed_string_types',
  'allow_suspicious_indices',
  'allow_suspicious_primary_key',
  'allow_suspicious_ttl_expressions',
  'allow_suspicious_types_in_group_by',
  'allow_suspicious_types_in_order_by',
  'allow_suspicious_variant_types',
  'allow_suspicious_codecs',
  'allow_nonconst_timezone_arguments',
  'allow_rank_dense_rank_arguments',
  'allow_deprecated_error_prone_window_functions', // neighbor, runningAccumulate: pure functions
];

/**
 * Obsolete no-ops of older engine versions (the engine lists them as "Obsolete setting, does
 * nothing" and still accepts them); Proton-era SQL sets them to turn on what is now always on.
 */
const OBSOLETE_NO_OPS = [
  'allow_experimental_bigint_types',
  'allow_experimental_map_type',
  'allow_experimental_geo_types',
  'allow_experimental_json_type',
  'allow_experimental_object_type',
  'allow_experimental_variant_type',
  'allow_experimental_dynamic_type',
  'allow_experimental_bfloat16_type',
  'allow_experimental_window_functions',
  'enable_json_type',
  'enable_variant_type',
  'enable_dynamic_type',
  'partial_merge_join_optimizations',
  'optimize_duplicate_order_by_and_distinct',
  'optimize_move_functions_out_of_any',
];

/** How a statement waits for the work it started (mutations, replicas): never what it may reach. */
const WAITING = ['mutations_sync', 'replication_alter_partitions_sync'];

/** Settings a query may set to any value. */
export const FREE_QUERY_SETTINGS: ReadonlySet<string> = new Set([
  ...PLAN,
  ...EXECUTION,
  ...SEMANTICS,
  ...FORMATTING,
  ...CHECKS,
  ...TYPE_CHECKS,
  ...OBSOLETE_NO_OPS,
  ...WAITING,
]);

/**
 * Families taken by prefix: optimiser switches (`optimize_*`, `query_plan_*`) and the formatting
 * knobs of output and input formats (`output_format_*`, `input_format_*`). A name of such a family
 * that is about a path, a file, a schema file, an address or a credential is not taken:
 * `output_format_schema` and `input_format_record_errors_file_path` write files, the Avro schema
 * registry is reached over the network. Neither is an optimiser's work budget (`max_`, `limit`).
 */
const OPTIMISER_FAMILY = /^(optimize_|query_plan_)/;
const FORMAT_FAMILY = /^(output_format_|input_format_)/;
const DOOR_WORDS =
  /path|file|schema|url|uri|host|user|password|profile|credential|secret|s3|http|kafka|registry|subject|terminal/;
const BUDGET_WORDS = /max_|limit|budget|_work/;

/**
 * Limits a query may only tighten, with the value Tributary's sessions run with (Infinity: no
 * limit, the engine's 0 or -1). Tributary sets none of them (src/engine/chdb-engine.ts sets
 * max_query_size at connect and max_execution_time per query, both refused below); the finite
 * ceilings are the engine's defaults, which test/integration/query-settings-policy.test.ts reads
 * back from the engine. A query may set a positive value no higher than the ceiling: 0 (which
 * means "no limit" to the engine) and negative values are refused.
 */
export const QUERY_LIMITS: ReadonlyMap<string, number> = new Map<string, number>([
  // Rows and bytes a query reads, sorts, groups, keeps in a set or join, or returns.
  ['max_rows_to_read', Infinity],
  ['max_bytes_to_read', Infinity],
  ['max_rows_to_read_leaf', Infinity],
  ['max_bytes_to_read_leaf', Infinity],
  ['max_rows_to_group_by', Infinity],
  ['max_rows_to_sort', Infinity],
  ['max_bytes_to_sort', Infinity],
  ['max_result_rows', Infinity],
  ['max_result_bytes', Infinity],
  ['max_rows_in_distinct', Infinity],
  ['max_bytes_in_distinct', Infinity],
  ['max_rows_to_transfer', Infinity],
  ['max_bytes_to_transfer', Infinity],
  ['max_rows_in_set', Infinity],
  ['max_bytes_in_set', Infinity],
  ['max_rows_in_join', Infinity],
  ['max_bytes_in_join', Infinity],
  ['default_max_bytes_in_join', 1_000_000_000],
  ['max_columns_to_read', Infinity],
  ['max_temporary_columns', Infinity],
  ['max_temporary_non_const_columns', Infinity],
  ['max_partitions_to_read', Infinity],
  ['max_partitions_per_insert_block', 100],
  // Memory of this query (not max_memory_usage_for_user: the engine has one user, whose limit
  // would bind every other query, Tributary's own included).
  ['max_memory_usage', Infinity],
  // Speed: a ceiling slows the query down, a floor makes a slow query fail.
  ['max_execution_speed', Infinity],
  ['max_execution_speed_bytes', Infinity],
  ['min_execution_speed', Infinity],
  ['min_execution_speed_bytes', Infinity],
  ['max_estimated_execution_time', Infinity],
  // Size of the query itself.
  ['max_ast_depth', 1000],
  ['max_ast_elements', 50_000],
  ['max_expanded_ast_elements', 500_000],
  ['max_subquery_depth', 100],
  ['max_parser_depth', 1000],
  ['max_analyze_depth', 5000],
  ['max_recursive_cte_evaluation_depth', 1000],
  // Safeguards of single functions.
  ['function_range_max_elements_in_block', 500_000_000],
  ['regexp_max_matches_per_row', 1000],
  ['extract_kvp_max_pairs_per_row', 1000],
]);

/**
 * Settings a query may set within a range: the Linux nice value of its own threads may only be
 * raised (0 to 19, a lower CPU priority). A negative value would put the query ahead of every
 * other one (the engine applies it when the process may, as root may).
 */
export const QUERY_RANGES: ReadonlyMap<string, { min: number; max: number; why: string }> = new Map([
  ['os_thread_priority', { min: 0, max: 19, why: 'a query may only lower its own CPU priority' }],
  ['os_threads_nice_value_query', { min: 0, max: 19, why: 'a query may only lower its own CPU priority' }],
]);

/** What the refusal of a setting no query may change says may be set instead. */
const ALLOWED_KINDS =
  'Proton query settings; plan and optimisation switches (optimize_*, query_plan_*, compile_expressions, ...); ' +
  'threads and block sizes; join, aggregation and type semantics; output_format_* and input_format_* formatting; ' +
  'checks that can only fail the query (force_*, ...); allow_suspicious_* type checks; ' +
  "and limits lowered below the server's (max_rows_to_read, max_memory_usage, ...). " +
  'See docs/sql-reference.md, "Engine settings a query may carry"';

function inFamily(name: string): boolean {
  if (DOOR_WORDS.test(name)) return false;
  return FORMAT_FAMILY.test(name) || (OPTIMISER_FAMILY.test(name) && !BUDGET_WORDS.test(name));
}

/** Whether a query may set the engine setting `name` at all (a limit: to a tighter value only). */
export function isAllowedQuerySetting(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    FREE_QUERY_SETTINGS.has(lower) || inFamily(lower) || QUERY_LIMITS.has(lower) || QUERY_RANGES.has(lower)
  );
}

const SIZE_SUFFIX: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, t: 1e12, p: 1e15, e: 1e18 };

/**
 * The number the engine reads from a setting's value, as far as a limit check needs it: a number
 * literal, negative or not (a fraction is truncated, as the engine does for an integer setting),
 * `true`/`false`, or
 * a string of digits with an optional size suffix (`'1G'`, `'10Mi'`). Anything else: undefined.
 */
export function settingNumber(value: Expr): number | undefined {
  if (value.kind === 'Unary' && value.op === '-' && value.operand.kind === 'Number') {
    const n = settingNumber(value.operand);
    return n === undefined ? undefined : -n;
  }
  if (value.kind === 'Bool') return value.value ? 1 : 0;
  if (value.kind === 'Number') {
    const text = value.text.toLowerCase();
    const n = /^0x[0-9a-f]+$/.test(text) ? Number.parseInt(text.slice(2), 16) : Number(text);
    return Number.isFinite(n) ? Math.trunc(n) : undefined;
  }
  if (value.kind === 'String') {
    const m = /^(\d+)(?:([kmgtpe])(i)?)?$/i.exec(value.value);
    if (!m) return undefined;
    const digits = Number(m[1]);
    if (!m[2]) return digits;
    const unit = m[2].toLowerCase();
    return m[3] ? digits * 1024 ** ('kmgtpe'.indexOf(unit) + 1) : digits * (SIZE_SUFFIX[unit] ?? 1);
  }
  return undefined;
}

function position(span: Span | undefined): string {
  return span ? ` (at position ${span.start + 1})` : '';
}

function refuse(setting: Setting, reason: string): never {
  throw err('SETTING_NOT_ALLOWED', { name: setting.name, position: position(setting.span), reason });
}

function checkLimit(setting: Setting, ceiling: number): void {
  const n = settingNumber(setting.value);
  const most = Number.isFinite(ceiling) ? `, at most ${ceiling}` : '';
  const want = `a positive whole number${most}`;
  if (n === undefined) refuse(setting, `is a limit: its value must be ${want}`);
  if (n <= 0)
    refuse(setting, `= ${n} would lift a limit: a query may lower a limit, not lift it (give ${want})`);
  if (n > ceiling)
    refuse(
      setting,
      `= ${n} would lift a limit above the server's ${ceiling}: a query may lower a limit, not lift it`,
    );
}

/** Refuse a setting (Proton's own are checked before) no query may carry, or a limit it would lift. */
export function checkQuerySetting(setting: Setting): void {
  const lower = setting.name.toLowerCase();
  const ceiling = QUERY_LIMITS.get(lower);
  if (ceiling !== undefined) {
    checkLimit(setting, ceiling);
    return;
  }
  const range = QUERY_RANGES.get(lower);
  if (range) {
    const n = settingNumber(setting.value);
    if (n === undefined || n < range.min || n > range.max)
      refuse(setting, `must be a whole number from ${range.min} to ${range.max}: ${range.why}`);
    return;
  }
  if (FREE_QUERY_SETTINGS.has(lower) || inFamily(lower)) return;
  refuse(
    setting,
    `may not be changed by a query (limits may only be lowered; readonly, allow_* that open a feature and engine doors stay as the server set them). A query may set: ${ALLOWED_KINDS}`,
  );
}
