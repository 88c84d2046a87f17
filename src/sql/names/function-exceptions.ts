/**
 * The hand-written part of the Proton <-> ClickHouse function-name mapping: the renames that the
 * mechanical rule (compare names lower-cased without underscores) cannot find
 * (streaming-sql-notes.md §2.3-2.4). Keys are Proton names in lower case.
 */

/** Proton name -> ClickHouse name, for names that are not the same word in both dialects. */
export const PROTON_RENAMES: Readonly<Record<string, string>> = {
  // uniq family: Proton renamed uniq* to unique* (uniq, uniq_exact, uniq_hll12 also kept)
  unique: 'uniq',
  unique_exact: 'uniqExact',
  unique_hll12: 'uniqHLL12',
  unique_combined: 'uniqCombined',
  unique_combined64: 'uniqCombined64',
  unique_up_to: 'uniqUpTo',
  // count(DISTINCT x) as a function; count_distinct_implementation defaults to unique_exact
  count_distinct: 'uniqExact',
  // constructors: array/map/tuple are type names in Proton
  array_cast: 'array',
  map_cast: 'map',
  tuple_cast: 'tuple',
  uuid: 'generateUUIDv4',
  // aggregates
  latest: 'anyLast',
  earliest: 'any',
  moving_sum: 'groupArrayMovingSum',
  moving_avg: 'groupArrayMovingAvg',
  // strings and dates
  replace_regex: 'replaceRegexpAll',
  replace_regexp: 'replaceRegexpAll',
  from_unix_timestamp: 'fromUnixTimestamp',
  from_unixtime: 'fromUnixTimestamp',
  to_base64: 'base64Encode',
  from_base64: 'base64Decode',
  filesystem_unreserved: 'filesystemUnreserved',
  // date_add(t, 1s) / date_sub(t, 1s): a time plus or minus an interval (the engine's date_add is a
  // parser-level alias, absent from its function list)
  date_add: 'plus',
  date_sub: 'minus',
  // Proton conversion helpers (functions_for_type): integer and floating point of any input
  to_int: 'toInt64',
  to_float: 'toFloat64',
  to_decimal: 'toDecimal64',
  // Proton's 16-bit date (its `date` type is the engine's Date too)
  to_date16: 'toDate',
  // Tributary's own: the values a JavaScript aggregate folds (src/udf/aggregate-udf-rewrite.ts)
  __trb_uda_values: 'groupArray',
  // ... and the deltas of those values: none outside a retracting aggregation (aggregate-split.ts)
  __trb_uda_deltas: 'emptyArrayInt8',
  // ... and those of an aggregate whose state is kept serialized, with its states (src/udf/uda-state.ts)
  __trb_uda_fvalues: 'groupArray',
  __trb_uda_states: 'groupArray',
  // casts
  _cast: '_CAST',
  __cast: '_CAST',
  _accurate_cast: 'accurateCast',
};

/** ClickHouse name -> Proton name, where snake-casing the ClickHouse name gives the wrong word. */
export const CLICKHOUSE_TO_PROTON: Readonly<Record<string, string>> = {
  uniq: 'unique',
  uniqExact: 'unique_exact',
  uniqHLL12: 'unique_hll12',
  uniqTheta: 'unique_theta',
  uniqCombined: 'unique_combined',
  uniqCombined64: 'unique_combined64',
  uniqUpTo: 'unique_up_to',
  generateUUIDv4: 'uuid',
  array: 'array_cast',
  map: 'map_cast',
  tuple: 'tuple_cast',
  replaceRegexpAll: 'replace_regexp_all',
  replaceRegexpOne: 'replace_regexp_one',
  parseDateTime64BestEffortUSOrZero: 'to_time',
  toYYYYMM: 'to_YYYYMM',
  toYYYYMMDD: 'to_YYYYMMDD',
  toYYYYMMDDhhmmss: 'to_YYYYMMDDhhmmss',
  quantileBFloat16: 'quantile_b_float16',
  CAST: 'cast',
  _CAST: '_cast',
  accurateCast: '_accurate_cast',
};

/**
 * Proton's functions the streaming planner handles in streaming queries (streaming-sql-notes.md
 * §1.11). In historical queries the translator gives them Proton's historical meaning
 * (translator/historical-streaming-functions.ts), except emit_version, which has none.
 */
export const STREAMING_ONLY_FUNCTIONS: ReadonlySet<string> = new Set([
  'lag',
  'lags',
  'lag_behind',
  'date_diff_within',
  'emit_version',
  'earliest_ts',
  'earliest_timestamp',
  'monotonic',
]);

/** Proton table functions with streaming meaning (FROM position). */
export const STREAMING_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  'table',
  'tumble',
  'hop',
  'session',
  'dedup',
  'changelog',
]);

/** Proton aggregates with no ClickHouse name, rewritten to ClickHouse calls by function-calls.ts. */
export const PROTON_SPECIAL_AGGREGATES: ReadonlySet<string> = new Set([
  'p90',
  'p95',
  'p99',
  'top_k',
  'top_k_exact',
  'top_k_weighted',
  'top_k_exact_weighted',
  'min_k',
  'max_k',
  'xirr',
]);

/** Proton scalar functions rewritten with different arguments. */
export const PROTON_SPECIAL_FUNCTIONS: ReadonlySet<string> = new Set(['to_time']);

/**
 * Parametric aggregates (ClickHouse `f(params)(args)`), which Proton writes with the parameters
 * as trailing arguments: `quantile(x, 0.9)` -> `quantile(0.9)(x)`. The value is the number of
 * leading arguments that stay arguments; any further ones become parameters. `paramsFirst`
 * marks the regression aggregates whose first arguments are the parameters.
 */
export const PARAMETRIC_AGGREGATES: Readonly<
  Record<string, { readonly args: number } | { readonly paramsFirst: number }>
> = {
  quantile: { args: 1 },
  quantileExact: { args: 1 },
  quantileExactLow: { args: 1 },
  quantileExactHigh: { args: 1 },
  quantileExactExclusive: { args: 1 },
  quantileExactInclusive: { args: 1 },
  quantileTDigest: { args: 1 },
  quantileTiming: { args: 1 },
  quantileBFloat16: { args: 1 },
  quantileDD: { args: 1 },
  quantileGK: { args: 1 },
  quantileDeterministic: { args: 2 },
  quantileExactWeighted: { args: 2 },
  quantileExactWeightedInterpolated: { args: 2 },
  quantileInterpolatedWeighted: { args: 2 },
  quantileTDigestWeighted: { args: 2 },
  quantileTimingWeighted: { args: 2 },
  quantileBFloat16Weighted: { args: 2 },
  quantiles: { args: 1 },
  quantilesExact: { args: 1 },
  quantilesExactLow: { args: 1 },
  quantilesExactHigh: { args: 1 },
  quantilesExactExclusive: { args: 1 },
  quantilesExactInclusive: { args: 1 },
  quantilesTDigest: { args: 1 },
  quantilesTiming: { args: 1 },
  quantilesBFloat16: { args: 1 },
  quantilesDD: { args: 1 },
  quantilesGK: { args: 1 },
  quantilesDeterministic: { args: 2 },
  quantilesExactWeighted: { args: 2 },
  quantilesTDigestWeighted: { args: 2 },
  quantilesTimingWeighted: { args: 2 },
  quantilesBFloat16Weighted: { args: 2 },
  topK: { args: 1 },
  topKWeighted: { args: 2 },
  groupUniqArray: { args: 1 },
  groupArray: { args: 1 },
  groupArrayLast: { args: 1 },
  groupArraySample: { args: 1 },
  groupArraySorted: { args: 1 },
  groupArrayMovingSum: { args: 1 },
  groupArrayMovingAvg: { args: 1 },
  histogram: { args: 1 },
  uniqUpTo: { args: 1 },
  approx_top_k: { args: 1 },
  approx_top_sum: { args: 2 },
  stochasticLinearRegression: { paramsFirst: 4 },
  stochasticLogisticRegression: { paramsFirst: 4 },
};
