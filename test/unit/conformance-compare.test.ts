// The result-comparison rules of the conformance runner (conformance README, rockets.py
// case_result_check), with expected values taken from the corpus and actual values as Tributary's
// JSON sends them (parsed losslessly, as the runner does).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'lossless-json';
import {
  type ActualResult,
  type Column,
  checkExpectation,
  fieldMatches,
  isClose,
  matchRows,
  textMatches,
} from '../../scripts/conformance/result-compare.ts';

/** A row as it arrives in a data event. */
const wire = (json: string) => parse(json) as unknown[];
const rows = (columns: Column[], json: string): ActualResult => ({
  kind: 'rows',
  columns,
  rows: parse(json) as unknown[][],
});
const col = (type: string, name = 'c'): Column => ({ name, type });

test('floats: relative tolerance 1e-2 (0000 case 0 expects "58.3" for a float32 max)', () => {
  assert.equal(fieldMatches('58.3', wire('[58.3]')[0], 'float32'), true);
  assert.equal(fieldMatches(58.3, wire('[58.30000305175781]')[0], 'float64'), true);
  assert.equal(fieldMatches('66.0', wire('[66]')[0], 'float64'), true);
  assert.equal(fieldMatches(100, wire('[100.99]')[0], 'float64'), true);
  assert.equal(fieldMatches(100, wire('[101.5]')[0], 'float64'), false);
  assert.equal(fieldMatches(0, wire('[1e-300]')[0], 'float64'), false);
  assert.equal(isClose(1, 1.0099), true);
  assert.equal(isClose(1, 1.011), false);
});

test('floats: NaN equals NaN, inf equals inf (sent as strings), text that is no float never matches', () => {
  assert.equal(fieldMatches('nan', 'nan', 'float64'), true);
  assert.equal(fieldMatches('nan', wire('[1]')[0], 'float64'), false);
  assert.equal(fieldMatches('inf', 'inf', 'float64'), true);
  assert.equal(fieldMatches('-inf', 'inf', 'float64'), false);
  assert.equal(fieldMatches('abc', wire('[1]')[0], 'float64'), false);
  // nullable(float64): the float rule applies to values, a null matches anything
  assert.equal(fieldMatches('1.5', wire('[1.5]')[0], 'nullable(float64)'), true);
  assert.equal(fieldMatches('1.5', null, 'nullable(float64)'), true);
});

test('integers compare as integers, exactly beyond 2^53; the expected text must be an integer', () => {
  assert.equal(fieldMatches(-1234567, wire('[-1234567]')[0], 'int32'), true);
  assert.equal(fieldMatches('3', wire('[3]')[0], 'uint64'), true);
  assert.equal(fieldMatches('0', wire('[0]')[0], 'int64'), true);
  assert.equal(fieldMatches(18446744073709551615n, wire('[18446744073709551615]')[0], 'uint64'), true);
  assert.equal(fieldMatches(18446744073709551615n, wire('[18446744073709551614]')[0], 'uint64'), false);
  // 64-bit values may also come quoted; 128-bit ones always do
  assert.equal(fieldMatches('9223372036854775807', '9223372036854775807', 'int64'), true);
  assert.equal(fieldMatches(1, '1', 'int128'), true);
  // Python int(): "1.0" raises, 1.9 truncates
  assert.equal(fieldMatches('1.0', wire('[1]')[0], 'int32'), false);
  assert.equal(fieldMatches(1.9, wire('[1]')[0], 'int32'), true);
  assert.equal(fieldMatches(135, wire('[135]')[0], 'uint8'), true);
});

test('arrays compare exactly as Python text (0013, 0008, 0000 examples)', () => {
  assert.equal(fieldMatches('[2, 3, 4]', wire('[[2,3,4]]')[0], 'array(int32)'), true);
  assert.equal(fieldMatches('[2, 3, 4]', wire('[[2,3,5]]')[0], 'array(int32)'), false);
  assert.equal(
    fieldMatches("['1.1', '2.2', '3.3']", wire('[["1.1","2.2","3.3"]]')[0], 'array(string)'),
    true,
  );
  assert.equal(
    fieldMatches(
      "[('1.1', 1), ('2.2', 2)]",
      wire('[[["1.1",1],["2.2",2]]]')[0],
      'array(tuple(string, uint64))',
    ),
    true,
  );
  assert.equal(
    fieldMatches(
      "[IPv4Address('192.168.168.165'), IPv4Address('192.168.168.164')]",
      wire('[["192.168.168.165","192.168.168.164"]]')[0],
      'array(ipv4)',
    ),
    true,
  );
  // float32 elements render as the Python float of the float32 value
  assert.equal(fieldMatches('[63.0]', wire('[[63]]')[0], 'array(float32)'), true);
  assert.equal(fieldMatches('[78.3]', wire('[[78.3]]')[0], 'array(float64)'), true);
  assert.equal(fieldMatches('[78.30000305175781]', wire('[[78.3]]')[0], 'array(float32)'), true);
  // no wildcard inside an array text, no comma splitting
  assert.equal(fieldMatches('[any_value]', wire('[[1]]')[0], 'array(int32)'), false);
  assert.equal(fieldMatches('any_value', wire('[[1]]')[0], 'array(int32)'), true);
});

test('a null in a nullable column matches anything; a non-null value is compared by the inner type', () => {
  assert.equal(fieldMatches('None', null, 'nullable(datetime64(3))'), true);
  assert.equal(fieldMatches('whatever', null, 'nullable(string)'), true);
  assert.equal(fieldMatches('abc', 'abc', 'nullable(string)'), true);
  assert.equal(fieldMatches('abd', 'abc', 'nullable(string)'), false);
  assert.equal(fieldMatches('None', null, 'string'), true, 'str(None) is None');
  assert.equal(fieldMatches('x', null, 'string'), false);
});

test('datetimes as Python str(): space separator, +00:00 with a time zone, microseconds as 6 digits', () => {
  assert.equal(fieldMatches('2020-02-02 20:00:00', '2020-02-02 20:00:00', 'datetime'), true);
  assert.equal(fieldMatches('2020-02-02 20:00:00', '2020-02-02 20:00:00.000', 'datetime64(3)'), true);
  assert.equal(
    fieldMatches('2020-02-02 20:01:00+00:00', '2020-02-02 20:01:00.000', "datetime64(3, 'UTC')"),
    true,
  );
  assert.equal(fieldMatches('2020-02-02 20:01:00', '2020-02-02 20:01:00.000', "datetime64(3, 'UTC')"), false);
  assert.equal(
    fieldMatches('2022-12-01 00:00:01.111000+00:00', '2022-12-01 00:00:01.111', "datetime64(3, 'UTC')"),
    true,
  );
  assert.equal(
    fieldMatches('2020-01-01 11:11:12.001000+00:00', '2020-01-01 11:11:12.001', "datetime64(3, 'UTC')"),
    true,
  );
  assert.equal(
    fieldMatches('2020-02-02 20:00:00+08:00', '2020-02-02 20:00:00', "datetime('Asia/Shanghai')"),
    true,
  );
  assert.equal(fieldMatches('2022-03-24', '2022-03-24', 'date'), true);
  // nanosecond digits in the corpus are string columns (to_string), compared as text
  assert.equal(
    fieldMatches('2013-01-01 00:00:00.000000001', '2013-01-01 00:00:00.000000001', 'string'),
    true,
  );
});

test('any_value matches any field; in text it matches one comma-separated item', () => {
  assert.equal(fieldMatches('any_value', wire('[1]')[0], 'int32'), true);
  assert.equal(fieldMatches('any_value', 'x', 'string'), true);
  // 0008 case 2: array_join(top_k((int, map), 3, true)) as tuple text
  const type = 'tuple(tuple(int32, map(string, int32)), uint64)';
  assert.equal(
    fieldMatches("any_value, {'key1': 111}), 1)", wire('[[[-1234561,{"key1":111}],1]]')[0], type),
    true,
  );
  assert.equal(
    fieldMatches("any_value, {'key2': 112}), 1)", wire('[[[-1234561,{"key1":111}],1]]')[0], type),
    false,
  );
  assert.equal(fieldMatches('any_value,any_value, 1)', wire('[[[-1234561,{"key1":111}],1]]')[0], type), true);
});

test('text comparison splits on commas and, like Python zip, compares only as many items as the shorter side', () => {
  assert.equal(textMatches('a,b', 'a,b'), true);
  assert.equal(textMatches('a,any_value', 'a,zzz'), true);
  assert.equal(textMatches('a', 'a,b'), true);
  assert.equal(textMatches('a,b', 'a'), true);
  assert.equal(textMatches('', 'x'), false);
  assert.equal(textMatches('', ''), true);
  // a string containing commas is still compared item by item
  assert.equal(fieldMatches('(1, 2),(3, 1)', '(1, 2),(3, 1)', 'string'), true);
  assert.equal(fieldMatches('(1, 2),(3, 9)', '(1, 2),(3, 1)', 'string'), false);
});

test('bool, tuple, map, decimal, uuid, ip, enum and fixed_string render as the Python driver did (0007 case 0)', () => {
  const columns: Column[] = [
    col('uuid'),
    col('int32'),
    col('uint8'),
    col('string'),
    col('float32'),
    col('decimal(9, 3)'),
    col('date'),
    col('datetime'),
    col("enum8('a' = 1, 'b' = 2, 'z' = 26)"),
    col('tuple(s string, i int32)'),
    col('ipv4'),
    col('ipv6'),
    col('map(string, int32)'),
    col('nullable(datetime64(3))'),
  ];
  const expected = [
    [
      '4c6a2a19-4f9f-456f-b076-c43ef97255a7',
      -1234567,
      135,
      '{@string}',
      12345.123,
      '123456.123',
      '2022-03-24',
      '2022-03-24 17:17:17',
      'a',
      "('a', 0)",
      '192.168.168.168',
      '2a02:aa08:e000:3100::20',
      "{'key1': 111}",
      'None',
    ],
  ];
  const actual = rows(
    columns,
    '[["4c6a2a19-4f9f-456f-b076-c43ef97255a7", -1234567, 135, "{@string}", 12345.123, 123456.123, "2022-03-24", "2022-03-24 17:17:17", "a", {"s":"a","i":0}, "192.168.168.168", "2a02:aa08:e000:3100::20", {"key1":111}, null]]',
  );
  assert.deepEqual(checkExpectation(expected, actual), { ok: true });
  assert.equal(fieldMatches('True', true, 'bool'), true);
  assert.equal(fieldMatches('False', false, 'bool'), true);
  assert.equal(fieldMatches('true', true, 'bool'), false, 'Python prints True');
  assert.equal(fieldMatches(true, true, 'bool'), true, 'a JSON true is compared as its Python text');
  assert.equal(
    fieldMatches('1.5', wire('[1.5]')[0], 'decimal(10, 2)'),
    true,
    'Decimal(150) / 100 prints 1.5',
  );
  assert.equal(fieldMatches('1.50', wire('[1.5]')[0], 'decimal(10, 2)'), false);
  assert.equal(fieldMatches('ab', 'ab\u0000\u0000', 'fixed_string(4)'), true);
  assert.equal(fieldMatches("('a',)", ['a'], 'tuple(string)'), true);
});

test('rows are a multiset: order is ignored, duplicates count, the row count must be equal', () => {
  const columns = [col('string', 'id'), col('float64', 'v')];
  const actual = rows(columns, '[["dev1", 57.3], ["dev2", 58.3], ["dev1", 57.3]]');
  assert.equal(
    checkExpectation(
      [
        ['dev2', '58.3'],
        ['dev1', '57.3'],
        ['dev1', 57.3],
      ],
      actual,
    ).ok,
    true,
  );
  const twice = checkExpectation(
    [
      ['dev2', '58.3'],
      ['dev2', '58.3'],
      ['dev1', '57.3'],
    ],
    actual,
  );
  assert.equal(twice.ok, false);
  const fewer = checkExpectation(
    [
      ['dev2', '58.3'],
      ['dev1', '57.3'],
    ],
    actual,
  );
  assert.equal(fewer.ok, false);
  if (!fewer.ok) assert.equal(fewer.summary, 'expected 2 rows, got 3');
  assert.equal(checkExpectation([], rows(columns, '[]')).ok, true);
  assert.equal(checkExpectation([], actual).ok, false);
});

test('the multiset matching finds an assignment when a greedy one would fail (wildcards)', () => {
  const columns = [col('string', 'a'), col('string', 'b')];
  const actual = parse('[["x", "1"], ["x", "2"]]') as unknown[][];
  const { missing, unexpected } = matchRows(
    [
      ['x', 'any_value'],
      ['x', '1'],
    ],
    actual,
    columns,
  );
  assert.deepEqual(missing, []);
  assert.deepEqual(unexpected, []);
});

test('a row must have as many fields as the result has columns', () => {
  const columns = [col('int32', 'a'), col('int32', 'b')];
  assert.equal(checkExpectation([[1]], rows(columns, '[[1, 2]]')).ok, false);
  assert.equal(checkExpectation([[1, 2, 3]], rows(columns, '[[1, 2]]')).ok, false);
  assert.equal(checkExpectation([[1, 2]], rows(columns, '[[1, 2]]')).ok, true);
});

test('error_code:N matches a query that failed with that engine code, and nothing else', () => {
  const err: ActualResult = { kind: 'error', code: 47, message: 'Unknown identifier' };
  assert.equal(checkExpectation('error_code:47', err).ok, true);
  assert.equal(checkExpectation('error_code:48', err).ok, false);
  assert.equal(checkExpectation('error_code:47', rows([col('int32')], '[[1]]')).ok, false);
  assert.equal(checkExpectation([[1]], err).ok, false);
  const runner: ActualResult = { kind: 'runner-error', message: 'depends_on 1: the query is not running' };
  assert.equal(checkExpectation('error_code:201', runner).ok, false);
});

test('skip always passes; error 159 (DDL timeout) skips the check as the original did; no result fails', () => {
  assert.equal(checkExpectation('skip', undefined).ok, true);
  assert.equal(checkExpectation('skip', { kind: 'error', code: 1, message: '' }).ok, true);
  assert.equal(checkExpectation([[1]], { kind: 'error', code: 159, message: 'timeout' }).ok, true);
  const missing = checkExpectation([[1]], undefined);
  assert.equal(missing.ok, false);
  // a dict is a response of the original server's REST API: it never matches a query result
  assert.equal(checkExpectation({ request_id: '1402' }, rows([], '[]')).ok, false);
});
