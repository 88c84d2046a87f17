// Rendering of result values as the original runner's Python driver + str() made them, and the
// parsing of result type names.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'lossless-json';
import { parseProtonType, timeZoneOf, unwrapType } from '../../scripts/conformance/proton-type.ts';
import {
  decimalText,
  pyFloatRepr,
  pyIntParse,
  pyRepr,
  pyStr,
  pyStrRepr,
  pyValueStr,
} from '../../scripts/conformance/python-text.ts';

const v = (json: string) => (parse(`[${json}]`) as unknown[])[0];

test('type names: Proton and ClickHouse spellings, arguments, named tuples, time zones', () => {
  const t = parseProtonType("datetime64(3, 'UTC')");
  assert.equal(t.name, 'datetime64');
  assert.deepEqual(t.literals, [3, 'UTC']);
  assert.equal(timeZoneOf(t), 'UTC');
  assert.equal(timeZoneOf(parseProtonType('datetime64(3)')), undefined);
  assert.equal(unwrapType(parseProtonType('LowCardinality(Nullable(String))')).name, 'string');
  const tup = parseProtonType('tuple(s string, i int32)');
  assert.deepEqual(tup.fieldNames, ['s', 'i']);
  assert.deepEqual(
    tup.types.map((x) => x.name),
    ['string', 'int32'],
  );
  const m = parseProtonType('Map(String, Array(Nullable(Float64)))');
  assert.equal(m.name, 'map');
  assert.equal(m.types[1]?.types[0]?.types[0]?.name, 'float64');
  assert.deepEqual(parseProtonType("enum8('a' = 1, 'b' = -2)").literals, ['a', 'b']);
  assert.equal(parseProtonType('FixedString(4)').name, 'fixed_string');
  assert.equal(parseProtonType('Bool').name, 'bool');
});

test("floats print as Python's repr", () => {
  const cases: Array<[number, string]> = [
    [1, '1.0'],
    [58.3, '58.3'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [123456789012345680, '1.2345678901234568e+17'],
    [9999999999999998, '9999999999999998.0'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [-2.5, '-2.5'],
    [0, '0.0'],
    [-0, '-0.0'],
    [Number.NaN, 'nan'],
    [Number.POSITIVE_INFINITY, 'inf'],
    [Number.NEGATIVE_INFINITY, '-inf'],
    [Math.fround(78.3), '78.30000305175781'],
  ];
  for (const [x, text] of cases) assert.equal(pyFloatRepr(x), text, String(x));
});

test('decimals print as Decimal(raw) / 10**scale: trailing zeros dropped, exponent form below 1E-6', () => {
  assert.equal(decimalText(v('1.5')), '1.5');
  assert.equal(decimalText(v('1.50')), '1.5');
  assert.equal(decimalText(v('2.00')), '2');
  assert.equal(decimalText(v('10.00')), '10');
  assert.equal(decimalText(v('123456.123')), '123456.123');
  assert.equal(decimalText(v('-0.50')), '-0.5');
  assert.equal(decimalText(v('0.000001')), '0.000001');
  assert.equal(decimalText(v('0.00000001')), '1E-8');
  assert.equal(decimalText(v('0.00')), '0');
  assert.equal(decimalText('12345678901234567890.12'), '12345678901234567890.12');
  // the driver did not divide scale-1 decimals: Decimal(15), not Decimal(15) / 10
  assert.equal(pyStr(v('1.5'), 'decimal(10, 1)'), '15');
  assert.equal(pyStr(v('2'), 'decimal(10, 1)'), '20');
  assert.equal(pyStr(v('1.25'), 'decimal(10, 2)'), '1.25');
  assert.equal(pyStr(v('7'), 'decimal(10, 0)'), '7');
});

test('strings repr with Python quoting rules', () => {
  assert.equal(pyStrRepr('abc'), "'abc'");
  assert.equal(pyStrRepr("it's"), '"it\'s"');
  assert.equal(pyStrRepr('say "hi" it\'s'), "'say \"hi\" it\\'s'");
  assert.equal(pyStrRepr('a\nb\tc\\'), "'a\\nb\\tc\\\\'");
  assert.equal(pyStrRepr('\u0000\u007f'), "'\\x00\\x7f'");
  assert.equal(pyStrRepr('é ü 中'), "'é ü 中'");
});

test('values by column type: str() at the top, repr() inside containers', () => {
  assert.equal(pyStr(v('"dev1"'), 'string'), 'dev1');
  assert.equal(pyRepr(v('"dev1"'), 'string'), "'dev1'");
  assert.equal(pyStr(v('18446744073709551615'), 'uint64'), '18446744073709551615');
  assert.equal(
    pyStr(v('"170141183460469231731687303715884105727"'), 'int128'),
    '170141183460469231731687303715884105727',
  );
  assert.equal(pyStr(v('1.5'), 'float64'), '1.5');
  assert.equal(pyStr(v('"nan"'), 'float64'), 'nan');
  assert.equal(pyStr(v('true'), 'bool'), 'True');
  assert.equal(pyStr(v('null'), 'nullable(int32)'), 'None');
  assert.equal(pyStr(v('[1,2,3]'), 'array(int32)'), '[1, 2, 3]');
  assert.equal(pyStr(v('[]'), 'array(int32)'), '[]');
  assert.equal(pyStr(v('[[1,"a"],[2,"b"]]'), 'array(tuple(int64, string))'), "[(1, 'a'), (2, 'b')]");
  assert.equal(pyStr(v('[1,"a"]'), 'tuple(int64, string)'), "(1, 'a')");
  assert.equal(pyStr(v('{"x":1,"y":"a"}'), 'tuple(x int64, y string)'), "(1, 'a')");
  assert.equal(pyStr(v('{"id2":1000,"id1":300}'), 'map(string, uint64)'), "{'id2': 1000, 'id1': 300}");
  assert.equal(pyStr(v('{"1":"a"}'), 'map(int32, string)'), "{1: 'a'}");
  assert.equal(
    pyStr(v('["2020-02-02", null]'), 'array(nullable(date))'),
    '[datetime.date(2020, 2, 2), None]',
  );
  assert.equal(
    pyStr(v('["2020-02-02 20:00:00"]'), 'array(datetime)'),
    '[datetime.datetime(2020, 2, 2, 20, 0)]',
  );
  assert.equal(
    pyStr(v('["2020-02-02 20:00:05.250"]'), "array(datetime64(3, 'UTC'))"),
    '[datetime.datetime(2020, 2, 2, 20, 0, 5, 250000, tzinfo=<UTC>)]',
  );
  assert.equal(
    pyStr(v('["4c6a2a19-4f9f-456f-b076-c43ef97255a7"]'), 'array(uuid)'),
    "[UUID('4c6a2a19-4f9f-456f-b076-c43ef97255a7')]",
  );
  assert.equal(pyStr(v('[1.5, 2]'), 'array(decimal(10, 2))'), "[Decimal('1.5'), Decimal('2')]");
});

test('datetimes: wall time of the column zone, ISO input with an offset converted, epoch seconds', () => {
  assert.equal(pyStr('2020-02-02 20:00:00', "datetime64(3, 'UTC')"), '2020-02-02 20:00:00+00:00');
  assert.equal(
    pyStr('2020-02-02T20:00:00.000Z', "datetime64(3, 'Asia/Shanghai')"),
    '2020-02-03 04:00:00+08:00',
  );
  assert.equal(pyStr('2020-02-02T20:00:00Z', 'datetime'), '2020-02-02 20:00:00');
  assert.equal(pyStr('2020-07-01 12:00:00', "datetime('Europe/Berlin')"), '2020-07-01 12:00:00+02:00');
  assert.equal(pyStr('2020-01-01 12:00:00', "datetime('Europe/Berlin')"), '2020-01-01 12:00:00+01:00');
  assert.equal(pyStr('2020-02-02 20:00:00.123456789', 'datetime64(9)'), '2020-02-02 20:00:00.123456');
  assert.equal(pyStr(v('1580673600'), 'datetime'), '2020-02-02 20:00:00');
});

test('values of case files print as Python str() of what json/yaml loading made of them', () => {
  assert.equal(pyValueStr('x'), 'x');
  assert.equal(pyValueStr(1), '1');
  assert.equal(pyValueStr(1.5), '1.5');
  assert.equal(pyValueStr(true), 'True');
  assert.equal(pyValueStr(null), 'None');
  assert.equal(pyValueStr(12345678901234567890n), '12345678901234567890');
  assert.equal(pyValueStr(['(1.1, 1), (2.2, 2)']), "['(1.1, 1), (2.2, 2)']");
  assert.equal(pyValueStr({ a: 1 }), "{'a': 1}");
  assert.equal(pyValueStr(new Date(Date.UTC(2020, 1, 2, 20, 0, 0))), '2020-02-02 20:00:00');
});

test('Python int(): integers, underscores and signs; no fractions in text', () => {
  assert.equal(pyIntParse(' -12 '), -12n);
  assert.equal(pyIntParse('1_000'), 1000n);
  assert.equal(pyIntParse('+5'), 5n);
  assert.equal(pyIntParse('1.0'), undefined);
  assert.equal(pyIntParse('None'), undefined);
  assert.equal(pyIntParse(-1.9), -1n);
  assert.equal(pyIntParse(v('9007199254740993')), 9007199254740993n);
});
