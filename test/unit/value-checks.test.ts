import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileValueCheck, type DoubtKind, LossyNumber } from '../../src/stream/value-checks.ts';

interface Outcome {
  ok: boolean;
  doubts: Array<[DoubtKind, string]>;
}

function run(type: string, v: unknown): Outcome {
  const doubts: Array<[DoubtKind, string]> = [];
  const e = compileValueCheck(type)(v, { add: (k, x) => doubts.push([k, x]) });
  return { ok: e === undefined, doubts };
}

function accepts(type: string, values: unknown[]): void {
  for (const v of values) assert.ok(run(type, v).ok, `${type} should accept ${JSON.stringify(v)}`);
}

function refuses(type: string, values: unknown[]): void {
  for (const v of values) assert.ok(!run(type, v).ok, `${type} should refuse ${JSON.stringify(v)}`);
}

test('integers: numbers and digit strings within range; no booleans', () => {
  accepts('Int8', [0, -128, 127, '12', '-5']);
  refuses('Int8', [128, -129, 1.5, 'abc', ' 12', '1.0', null, [], {}, true, false, Infinity]);
  accepts('UInt8', [0, 255, '255']);
  refuses('UInt8', [-1, 256, '-1']);
  accepts('Int64', [Number.MAX_SAFE_INTEGER, '9223372036854775807', '-9223372036854775808']);
  refuses('Int64', ['9223372036854775808', '-9223372036854775809']);
  accepts('UInt64', ['18446744073709551615', 0]);
  refuses('UInt64', ['18446744073709551616', -1]);
  accepts('Int256', ['-57896044618658097711785492504343953926634992332820282019728792003956564819968']);
  accepts('UInt128', ['340282366920938463463374607431768211455']);
  refuses('UInt128', ['340282366920938463463374607431768211456']);
});

test('a 64-bit integer that lost precision in JSON.parse asks for a lossless parse', () => {
  assert.throws(() => compileValueCheck('Int64')(2 ** 63, { add() {} }), LossyNumber);
  assert.throws(() => compileValueCheck('Array(UInt64)')([1, 2 ** 60], { add() {} }), LossyNumber);
  assert.ok(run('Int32', 2 ** 60).ok === false);
});

test('integers clearly past a 64-bit or wider range are refused without a second parse', () => {
  for (const v of [1e19, 1.18e21, -1e19, 2 ** 64, Infinity, -Infinity]) {
    const e = compileValueCheck('Int64')(v, { add() {} });
    assert.match(e ?? '', /out of range for int64/, String(v));
  }
  assert.match(compileValueCheck('UInt64')(1.18e21, { add() {} }) ?? '', /out of range for uint64/);
  assert.match(compileValueCheck('UInt64')(-1e19, { add() {} }) ?? '', /out of range for uint64/);
  // Inside a wider type's range, the exact digits decide (LossyNumber asks for them).
  assert.throws(() => compileValueCheck('Int128')(1e19, { add() {} }), LossyNumber);
  assert.throws(() => compileValueCheck('UInt64')(1e19, { add() {} }), LossyNumber);
  accepts('Int128', ['10000000000000000000', '-1180000000000000000000']);
  refuses('Int64', ['10000000000000000000', '1e19']);
});

test('floats: numbers, numeric strings, inf and nan spellings; no booleans, no overflowing literals', () => {
  accepts('Float64', [1, -1.5, 1e300, '1.5', '-2e-3', 'inf', '-inf', '+inf', 'nan', 'NaN', 'Infinity']);
  refuses('Float64', [true, false, Infinity, -Infinity, '1e400', {}, []]);
  accepts('Float32', [3.4e38, -3.4e38, 1e19, '1e38', 'inf']);
  refuses('Float32', ['abc', '1.2.3', null, [], {}, true, 1e39, -1e39, '1e39', Infinity]);
  assert.match(compileValueCheck('Float32')(1e39, { add() {} }) ?? '', /1e\+39 is out of range for float32/);
});

test('decimals: digits before the point are bounded by precision - scale', () => {
  accepts('Decimal(10, 2)', [1.234, '12345678.99', '-12345678', 0, '1e3']);
  refuses('Decimal(10, 2)', [123456789.12, '123456789', 'abc', '1e9', true]);
  accepts('Decimal64(4)', ['99999999999999.9999']);
  refuses('Decimal32(2)', ['12345678.1']);
});

test('bool, strings, fixed strings, uuid, ip addresses, enums', () => {
  accepts('Bool', [true, false, 0, 1]);
  refuses('Bool', ['true', 2, 'yes', null]);
  accepts('String', ['x', 1, true, Number.MAX_VALUE]);
  refuses('String', [{ a: 1 }, [1, 2], {}, []]);
  assert.match(compileValueCheck('String')({ a: 1 }, { add() {} }) ?? '', /expected a string, got an object/);
  accepts('FixedString(3)', ['abc', 'é', 12]);
  refuses('FixedString(3)', ['abcd', 'éé', {}]);
  accepts('UUID', ['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000']);
  refuses('UUID', ['xyz', 123, '123e4567-e89b-12d3-a456-42661417400']);
  accepts('IPv4', ['1.2.3.4', '255.255.255.255', '0.0.0.0']);
  refuses('IPv4', ['256.1.1.1', '::1', 16909060, '1.2.3']);
  accepts('IPv6', ['::1', '2001:db8::ff00:42:8329', '1.2.3.4']);
  refuses('IPv6', ['zz', 1]);
  accepts("Enum8('a' = 1, 'b' = 2)", ['a', 'b', 1, 2]);
  refuses("Enum8('a' = 1, 'b' = 2)", ['c', 3, null]);
});

test('dates and date-times: ISO forms checked here, other spellings left to the engine', () => {
  accepts("DateTime64(3, 'UTC')", [
    '2024-01-02 03:04:05',
    '2024-01-02 03:04:05.123',
    '2024-01-02T03:04:05Z',
    '2024-01-02T03:04:05.123456789+02:00',
    '2024-01-02T03:04',
    '2024-01-02',
    '1700000000',
    1700000000123,
  ]);
  refuses('DateTime', [1.5, -1, true, null, {}]);
  assert.deepEqual(run('DateTime', 'Jan 2 2024').doubts, [['datetime', 'Jan 2 2024']]);
  assert.deepEqual(run('DateTime', '2024-13-01 00:00:00').doubts, [['datetime', '2024-13-01 00:00:00']]);
  accepts('Date', ['2024-01-02', 19000, '19000', 65535]);
  refuses('Date', ['2024-01-02 10:00:00', '2024-13-01', 1.5, 65536, 1e19, '99999999999999999999']);
  accepts('Date32', [120529]);
  refuses('Date32', [120530]);
  accepts('DateTime', [4294967295]);
  refuses('DateTime', [4294967296, 1e19]);
  accepts('DateTime64(9)', [1.7e18]);
  refuses('DateTime64(9)', [2 ** 63, 1e19, 1.18e21, '12345678901234567890']);
  assert.deepEqual(run('Date32', '2024/01/02').doubts, [['date', '2024/01/02']]);
});

test('composite types: arrays, maps, tuples, nullable, low cardinality, geo', () => {
  accepts('Array(Int32)', [[], [1, 2], ['3']]);
  refuses('Array(Int32)', [1, [1.5], [null], 'x']);
  accepts('Array(Nullable(Int32))', [[1, null]]);
  accepts('Nullable(Int32)', [null, 1]);
  refuses('Nullable(Int32)', ['x']);
  accepts('LowCardinality(String)', ['x']);
  accepts('Map(String, Int32)', [{}, { a: 1, b: '2' }]);
  refuses('Map(String, Int32)', [[], { a: 'x' }, null]);
  accepts('Map(Int32, String)', [{ 1: 'a' }]);
  refuses('Map(Int32, String)', [{ x: 'a' }]);
  accepts('Tuple(Int32, String)', [[1, 'x']]);
  refuses('Tuple(Int32, String)', [[1], { a: 1 }, ['x', 'y']]);
  accepts('Tuple(x Int32, y String)', [{ x: 1, y: 'z' }, { x: 1 }]);
  refuses('Tuple(x Int32, y String)', [[1, 'z'], { x: 'a' }, { z: 1 }]);
  accepts('Point', [[1, 2]]);
  refuses('Point', [[1], 'x']);
  accepts('Ring', [
    [
      [1, 2],
      [3, 4],
    ],
  ]);
  accepts('JSON', [{ anything: [1] }]);
});
