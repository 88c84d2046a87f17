import type { Expr, FunctionCall } from '../ast/expression.ts';
import { MAPPED_JSON_FUNCTIONS, mapJsonCall } from './json-functions.ts';
import { mapRandomInType } from './random-in-type.ts';

/**
 * Functions Proton registers that the engine does not have under a matching name: the ones
 * Tributary maps (with Proton's arguments and meaning) and the ones it refuses, each with the reason
 * and, where there is one, what to write instead. Every name of Proton's function list
 * (test/fixtures/proton/proton-functions.txt) resolves in the catalogue, maps here, is a type name,
 * or is refused here: `test/unit/proton-function-list.test.ts` walks the whole list.
 */

/** The epoch of Twitter snowflake ids, which Proton's snowflake functions use (ms). */
const SNOWFLAKE_EPOCH = '1288834974657';

const call = (name: string, args: readonly Expr[], at: FunctionCall): FunctionCall => ({
  kind: 'Function',
  name,
  args,
  distinct: false,
  span: at.span,
});
const num = (text: string, at: FunctionCall): Expr => ({ kind: 'Number', text, span: at.span });
const str = (value: string, at: FunctionCall): Expr => ({ kind: 'String', value, span: at.span });

/**
 * A Proton-only scalar call as an engine call, or undefined when `lower` is not one of them (or its
 * arguments do not fit, which leaves the engine to say so).
 */
export function mapProtonOnlyCall(lower: string, c: FunctionCall): FunctionCall | undefined {
  const a = c.args;
  switch (lower) {
    // snowflake_to_datetime(id[, time_zone]) and the others: Twitter's epoch, as Proton has it.
    case 'snowflake_to_datetime':
    case 'snowflake_to_datetime64': {
      const [id, tz] = a;
      if (!id || a.length > 2) return undefined;
      const name = lower.endsWith('64') ? 'snowflakeIDToDateTime64' : 'snowflakeIDToDateTime';
      const args = [call('toUInt64', [id], c), num(SNOWFLAKE_EPOCH, c), ...(tz ? [tz] : [])];
      return call(name, args, c);
    }
    case 'datetime_to_snowflake':
    case 'datetime64_to_snowflake': {
      const [t] = a;
      if (!t || a.length !== 1) return undefined;
      // Proton answers int64, as the engine's former dateTimeToSnowflake did.
      return call('toInt64', [call('dateTimeToSnowflakeID', [t, num(SNOWFLAKE_EPOCH, c)], c)], c);
    }
    // xirr([cash_flows], [dates][, guess]): the array form; the aggregate is in function-calls.ts.
    case 'xirr':
      if (a.length < 2 || a.length > 3) return undefined;
      return call('financialInternalRateOfReturnExtended', a, c);
    // to_bool_or_default(x[, default]): x as bool, or the default (false) when it does not convert.
    case 'to_bool_or_default': {
      const [x, fallback] = a;
      if (!x || a.length > 2) return undefined;
      return call('accurateCastOrDefault', [x, str('Bool', c), ...(fallback ? [fallback] : [])], c);
    }
    // random_in_type(type[, max][, generator]): a random value of the type (random-in-type.ts).
    case 'random_in_type':
      return mapRandomInType(c);
    // dict_get_decimal32/64/128[_or_default](dict, attr, key[, default]): the engine has no typed
    // decimal getters; the untyped ones answer the attribute's own (decimal) type.
    case 'dict_get_decimal32':
    case 'dict_get_decimal64':
    case 'dict_get_decimal128':
      return a.length === 3 ? call('dictGet', a, c) : undefined;
    case 'dict_get_decimal32_or_default':
    case 'dict_get_decimal64_or_default':
    case 'dict_get_decimal128_or_default':
      return a.length === 4 ? call('dictGetOrDefault', a, c) : undefined;
    // json_value, json_values, json_extract_array: Proton's meaning (json-functions.ts).
    default:
      return mapJsonCall(lower, c);
  }
}

/** Names `mapProtonOnlyCall` maps. */
export const MAPPED_PROTON_ONLY: ReadonlySet<string> = new Set([
  'dict_get_decimal32',
  'dict_get_decimal64',
  'dict_get_decimal128',
  'dict_get_decimal32_or_default',
  'dict_get_decimal64_or_default',
  'dict_get_decimal128_or_default',
  'snowflake_to_datetime',
  'snowflake_to_datetime64',
  'datetime_to_snowflake',
  'datetime64_to_snowflake',
  'xirr',
  'to_bool_or_default',
  'random_in_type',
  ...MAPPED_JSON_FUNCTIONS,
]);

const NOT_IN_ENGINE = 'the embedded engine is built without it';
const NLP = `a natural-language function; ${NOT_IN_ENGINE}`;
const S2 = `an S2 geometry function; ${NOT_IN_ENGINE}`;
const THETA = `a theta-sketch function; ${NOT_IN_ENGINE}; use uniq() or uniq_exact()`;
const INTERNAL = 'internal to Proton (not for queries)';

/** Proton functions Tributary refuses, with the reason (and the alternative, if any). */
export const UNSUPPORTED_PROTON_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['blake3', `${NOT_IN_ENGINE}; use sha256() or xxh3()`],
  ['weak_hash32', `${NOT_IN_ENGINE}; use xxh3() or city_hash64()`],
  ['hashid', `${NOT_IN_ENGINE}; use sqid_encode() for short ids`],
  [
    'grok',
    'grok patterns are not supported; use extract_all_groups() or regexp_extract() with the regular expression',
  ],
  ['meili_match', INTERNAL],
  ['to_concrete_type', INTERNAL],
  ['group_uniq_array_retract', `${INTERNAL}; group_uniq_array() retracts over changelog inputs`],
  ['to_date_time_components', INTERNAL],
  ['to_relative_subsecond_num', INTERNAL],
  ['get_fuzzer_data', 'a test function of Proton'],
  ['trap', 'a test function of Proton'],
  ['edition', "Proton's edition; /v1beta2/info tells what this server is"],
  ['reverse_dns_query', 'it reaches the network; user SQL may not'],
  ['toWeekOfWeekYear', `${NOT_IN_ENGINE}; use to_iso_week()`],
  ['toWeekYear', `${NOT_IN_ENGINE}; use to_iso_year()`],
  ['detect_charset', NLP],
  ['detect_language', NLP],
  ['detect_language_mixed', NLP],
  ['detect_language_unknown', NLP],
  ['detect_programming_language', NLP],
  ['detect_tonality', NLP],
  ['lemmatize', NLP],
  ['stem', NLP],
  ['synonyms', NLP],
  ['geo_to_s2', S2],
  ['s2_to_geo', S2],
  ['s2_cap_contains', S2],
  ['s2_cap_union', S2],
  ['s2_cells_intersect', S2],
  ['s2_get_neighbors', S2],
  ['s2_rect_add', S2],
  ['s2_rect_contains', S2],
  ['s2_rect_intersection', S2],
  ['s2_rect_union', S2],
  ['uniq_theta', THETA],
  ['unique_theta', THETA],
  ['uniq_theta_intersect', THETA],
  ['uniq_theta_not', THETA],
  ['uniq_theta_union', THETA],
]);

/**
 * Names in Proton's list that are not functions one calls: pieces of the distance and norm families
 * (`l2_distance`, `cosine_distance`, `lp_norm` resolve by their whole names), and literals.
 */
export const NOT_FUNCTION_NAMES: ReadonlyMap<string, string> = new Map([
  ['1', 'part of l1_norm / l1_distance'],
  ['2', 'part of l2_norm / l2_distance'],
  ['2_squared', 'part of l2_squared_norm / l2_squared_distance'],
  ['l1', 'part of l1_norm / l1_distance'],
  ['l2', 'part of l2_norm / l2_distance'],
  ['l2_squared', 'part of l2_squared_norm / l2_squared_distance'],
  ['linf', 'part of linf_norm / linf_distance'],
  ['lp', 'part of lp_norm / lp_distance'],
  ['p', 'part of lp_norm / lp_distance'],
  ['cosine', 'part of cosine_distance'],
  ['inf', 'the literal inf (infinity)'],
  ['GEOMETRY', `a type ${NOT_IN_ENGINE}`],
]);

/** Why `name` is refused, or undefined when it is not a refused Proton function. */
export function unsupportedProtonFunction(name: string): string | undefined {
  return UNSUPPORTED_PROTON_FUNCTIONS.get(name) ?? UNSUPPORTED_PROTON_FUNCTIONS.get(name.toLowerCase());
}
