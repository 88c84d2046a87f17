import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLICKHOUSE_FUNCTIONS, ENGINE_VERSION } from '../../src/sql/names/clickhouse-functions.generated.ts';
import { mapFunctionCall } from '../../src/sql/names/function-calls.ts';
import {
  isAggregateName,
  isStreamingOnlyFunction,
  protonFunctionNames,
  resolveFunctionName,
  resolveTableFunctionName,
  suggestFunctionName,
  toProtonFunctionName,
} from '../../src/sql/names/function-catalog.ts';
import { PROTON_RENAMES } from '../../src/sql/names/function-exceptions.ts';
import { toSnakeCase } from '../../src/sql/names/snake-case.ts';
import { parseExpression } from '../../src/sql/parser/parse.ts';
import { printExpression } from '../../src/sql/printer/format.ts';

function mapped(text: string): string {
  const m = mapFunctionCall(parseExpression(text) as never);
  if (m.kind !== 'call')
    return `<${m.kind}${m.kind === 'unknown' && m.suggestion ? `:${m.suggestion}` : ''}>`;
  return printExpression(m.call);
}

describe('the generated map', () => {
  test('holds the engine catalogue', () => {
    assert.ok(CLICKHOUSE_FUNCTIONS.length > 1500, `${CLICKHOUSE_FUNCTIONS.length} functions`);
    assert.match(ENGINE_VERSION, /^\d+\.\d+/);
  });

  test('every hand-written rename targets a function the engine has', () => {
    const names = new Set(CLICKHOUSE_FUNCTIONS.map(([n]) => n));
    for (const [proton, ch] of Object.entries(PROTON_RENAMES))
      assert.ok(names.has(ch), `${proton} -> ${ch} is not an engine function`);
  });
});

describe('Proton -> ClickHouse', () => {
  test('snake_case with acronyms as one word, any case', () => {
    const cases: Record<string, string> = {
      to_datetime: 'toDateTime',
      to_datetime64: 'toDateTime64',
      lower_utf8: 'lowerUTF8',
      cut_url_parameter: 'cutURLParameter',
      to_ipv4: 'toIPv4',
      ipv4_num_to_string: 'IPv4NumToString',
      json_extract_string: 'JSONExtractString',
      to_uint32_or_null: 'toUInt32OrNull',
      sha256: 'SHA256',
      is_nan: 'isNaN',
      median_tdigest: 'medianTDigest',
      array_auc: 'arrayAUC',
      to_YYYYMMDD: 'toYYYYMMDD',
      TO_STRING: 'toString',
      toString: 'toString',
      date_diff: 'dateDiff',
      format_datetime: 'formatDateTime',
    };
    for (const [proton, ch] of Object.entries(cases))
      assert.equal(resolveFunctionName(proton)?.clickhouse, ch, proton);
  });

  test('the exceptions of §2.3', () => {
    const cases: Record<string, string> = {
      unique: 'uniq',
      unique_exact: 'uniqExact',
      uniq_exact: 'uniqExact',
      count_distinct: 'uniqExact',
      array_cast: 'array',
      map_cast: 'map',
      tuple_cast: 'tuple',
      uuid: 'generateUUIDv4',
      latest: 'anyLast',
      earliest: 'any',
      replace_regex: 'replaceRegexpAll',
      from_unix_timestamp: 'fromUnixTimestamp',
      moving_sum: 'groupArrayMovingSum',
      to_date16: 'toDate',
    };
    for (const [proton, ch] of Object.entries(cases))
      assert.equal(resolveFunctionName(proton)?.clickhouse, ch, proton);
  });

  test('combinator suffixes on any aggregate, Proton renames included', () => {
    assert.deepEqual(resolveFunctionName('sum_distinct_if'), {
      clickhouse: 'sumDistinctIf',
      aggregate: true,
      base: 'sum',
      combinators: ['Distinct', 'If'],
    });
    assert.equal(resolveFunctionName('count_if')?.clickhouse, 'countIf');
    assert.equal(resolveFunctionName('unique_exact_if')?.clickhouse, 'uniqExactIf');
    assert.equal(resolveFunctionName('avg_state')?.clickhouse, 'avgState');
    assert.equal(resolveFunctionName('avg_merge')?.clickhouse, 'avgMerge');
    assert.equal(resolveFunctionName('sum_or_null')?.clickhouse, 'sumOrNull');
    assert.equal(resolveFunctionName('group_array_for_each')?.clickhouse, 'groupArrayForEach');
    assert.equal(resolveFunctionName('latest_if')?.clickhouse, 'anyLastIf');
    assert.equal(resolveFunctionName('sumIf')?.clickhouse, 'sumIf');
    // a scalar function cannot take a combinator
    assert.equal(resolveFunctionName('lower_if'), undefined);
  });

  test('parametric aggregates: trailing arguments become parameters', () => {
    assert.equal(mapped('quantile(x, 0.9)'), 'quantile(0.9)(x)');
    assert.equal(mapped('quantile(x)'), 'quantile(x)');
    assert.equal(mapped('quantiles(x, 0.5, 0.9)'), 'quantiles(0.5, 0.9)(x)');
    assert.equal(mapped('quantile_exact_weighted(x, w, 0.5)'), 'quantileExactWeighted(0.5)(x, w)');
    assert.equal(mapped('quantile_if(x, c, 0.5)'), 'quantileIf(0.5)(x, c)');
    assert.equal(mapped('median(x)'), 'median(x)');
    assert.equal(mapped('p90(x)'), 'quantile(0.9)(x)');
    assert.equal(mapped('p95_if(x, c)'), 'quantileIf(0.95)(x, c)');
    assert.equal(mapped('p99(x)'), 'quantile(0.99)(x)');
    // with_count defaults to true (0099_fixed_issues id 2, 0014 id 11: `top_k(id, 2)` -> [(1, 2), ...])
    assert.equal(
      mapped('top_k(x, 5)'),
      "arrayMap(__t -> tuple(tupleElement(__t, 1), tupleElement(__t, 2)), topK(5, 3, 'counts')(x))",
    );
    assert.equal(
      mapped('top_k(x, 5, true, 30)'),
      "arrayMap(__t -> tuple(tupleElement(__t, 1), tupleElement(__t, 2)), topK(5, 30, 'counts')(x))",
    );
    assert.equal(mapped('top_k_state(x, 5, true)'), "topKState(5, 3, 'counts')(x)");
    assert.equal(mapped('top_k(x, 5, false)'), 'topK(5)(x)');
    assert.equal(mapped('top_k_weighted(x, w, 3, false)'), 'topKWeighted(3)(x, w)');
    assert.equal(mapped('min_k(x, 3)'), 'groupArraySorted(3)(x)');
    assert.equal(mapped('min_k(x, 3, y)'), 'groupArraySorted(3)((x, y))');
    assert.equal(mapped('max_k(x, 3)'), 'arraySlice(arrayReverseSort(groupArray(x)), 1, 3)');
    assert.equal(mapped('group_uniq_array(x, 5)'), 'groupUniqArray(5)(x)');
    assert.equal(mapped('moving_sum(x, 3)'), 'groupArrayMovingSum(3)(x)');
    assert.equal(
      mapped("stochastic_linear_regression(0.1, 0.0, 5, 'SGD', y, x)"),
      "stochasticLinearRegression(0.1, 0.0, 5, 'SGD')(y, x)",
    );
    // the ClickHouse form is kept as written
    assert.equal(mapped('quantile(0.9)(x)'), 'quantile(0.9)(x)');
  });

  test('to_time and FILTER', () => {
    assert.equal(mapped('to_time(s)'), 'parseDateTime64BestEffortUSOrZero(s, 3)');
    assert.equal(mapped("to_time(s, 'UTC')"), "parseDateTime64BestEffortUSOrZero(s, 3, 'UTC')");
    assert.equal(mapped('sum(x) filter (where c)'), 'sumIf(x, c)');
  });

  test('streaming-only markers are reported, not translated', () => {
    for (const f of [
      'lag(x)',
      'lags(x, 1, 3)',
      'emit_version()',
      'date_diff_within(10s)',
      'earliest_ts()',
      'earliest_timestamp()',
      'lag_behind(10ms)',
    ]) {
      assert.equal(mapped(f), '<streaming>', f);
    }
    assert.ok(isStreamingOnlyFunction('LAG'));
  });

  test('unknown functions get the nearest known Proton name', () => {
    assert.equal(mapped('to_strng(x)'), '<unknown:to_string>');
    assert.equal(mapped('json_extract_strin(x)'), '<unknown:json_extract_string>');
    assert.equal(mapped('zzzzzz(x)'), '<unknown>');
    assert.equal(suggestFunctionName('uniqe_exact'), 'unique_exact');
  });

  test('aggregates are recognised in every spelling', () => {
    for (const n of [
      'count',
      'SUM',
      'unique',
      'p90',
      'top_k',
      'min_k',
      'latest',
      'count_if',
      'avg_state',
      'group_array',
    ])
      assert.ok(isAggregateName(n), n);
    for (const n of ['to_string', 'lower', 'now', 'lag']) assert.ok(!isAggregateName(n), n);
  });

  test('table functions', () => {
    assert.equal(resolveTableFunctionName('numbers'), 'numbers');
    assert.equal(resolveTableFunctionName('generate_random'), 'generateRandom');
    assert.equal(resolveTableFunctionName('nope'), undefined);
  });
});

describe('ClickHouse -> Proton', () => {
  test('snake_case with acronyms', () => {
    const cases: Record<string, string> = {
      toDateTime: 'to_datetime',
      lowerUTF8: 'lower_utf8',
      cutURLParameter: 'cut_url_parameter',
      toIPv4: 'to_ipv4',
      IPv4NumToString: 'ipv4_num_to_string',
      JSONExtractString: 'json_extract_string',
      toUInt32OrNull: 'to_uint32_or_null',
      SHA256: 'sha256',
      CRC32: 'crc32',
      isNaN: 'is_nan',
      medianTDigest: 'median_tdigest',
      arrayAUC: 'array_auc',
      L2Norm: 'l2_norm',
    };
    for (const [ch, proton] of Object.entries(cases)) assert.equal(toSnakeCase(ch), proton, ch);
  });

  test('exceptions and combinators', () => {
    assert.equal(toProtonFunctionName('uniqExact'), 'unique_exact');
    assert.equal(toProtonFunctionName('uniqExactIf'), 'unique_exact_if');
    assert.equal(toProtonFunctionName('generateUUIDv4'), 'uuid');
    assert.equal(toProtonFunctionName('toYYYYMM'), 'to_YYYYMM');
    assert.equal(toProtonFunctionName('anyLast'), 'any_last');
    assert.equal(toProtonFunctionName('toString'), 'to_string');
  });

  test('round trip: the Proton name of every engine function resolves back to that function', () => {
    const failures: string[] = [];
    for (const [name, , aliasTo] of CLICKHOUSE_FUNCTIONS) {
      if (aliasTo !== '' || name.startsWith('_')) continue;
      const proton = toProtonFunctionName(name);
      const back = resolveFunctionName(proton)?.clickhouse;
      if (back === undefined) failures.push(`${name} -> ${proton} -> (unknown)`);
    }
    assert.deepEqual(failures, []);
    assert.ok(protonFunctionNames().includes('to_datetime'));
  });
});
