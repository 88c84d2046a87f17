import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDataType, TypeSyntaxError } from '../../src/sql/types/data-type.ts';
import { toClickHouseType, toProtonType, UnknownTypeError } from '../../src/sql/types/proton-types.ts';

const CASES: Array<[string, string, string]> = [
  ['string', 'String', 'string'],
  ['low_cardinality(string)', 'LowCardinality(String)', 'low_cardinality(string)'],
  ["datetime64(3, 'UTC')", "DateTime64(3, 'UTC')", "datetime64(3, 'UTC')"],
  ['Datetime64(3)', 'DateTime64(3)', 'datetime64(3)'],
  ['nullable(int)', 'Nullable(Int32)', 'nullable(int32)'],
  ['map(string, array(uint64))', 'Map(String, Array(UInt64))', 'map(string, array(uint64))'],
  ['tuple(a int32, b string)', 'Tuple(a Int32, b String)', 'tuple(a int32, b string)'],
  ["enum8('a' = 1, 'b' = -2)", "Enum8('a' = 1, 'b' = -2)", "enum8('a' = 1, 'b' = -2)"],
  ['decimal(10,2)', 'Decimal(10, 2)', 'decimal(10, 2)'],
  ['aggregate_function(sum, int64)', 'AggregateFunction(sum, Int64)', 'aggregate_function(sum, int64)'],
  ['bool', 'Bool', 'bool'],
  ['boolean', 'Bool', 'bool'],
  ['ipv6', 'IPv6', 'ipv6'],
  ['uuid', 'UUID', 'uuid'],
  ['fixed_string(16)', 'FixedString(16)', 'fixed_string(16)'],
  ['bigint', 'Int64', 'int64'],
  ['double', 'Float64', 'float64'],
  ['UInt256', 'UInt256', 'uint256'],
  ['json', 'JSON', 'json'],
  ['interval_second', 'IntervalSecond', 'interval_second'],
];

test('types map both ways between Proton and ClickHouse spellings', () => {
  for (const [input, ch, proton] of CASES) {
    assert.equal(toClickHouseType(input), ch, input);
    assert.equal(toProtonType(ch), proton, ch);
    assert.equal(toProtonType(input), proton, input);
  }
});

test('unknown type names and malformed types are refused with a position', () => {
  assert.throws(
    () => toClickHouseType('strin'),
    (e: unknown) => e instanceof UnknownTypeError && e.typeName === 'strin',
  );
  assert.throws(
    () => parseDataType('array(int32'),
    (e: unknown) => e instanceof TypeSyntaxError && e.offset === 11,
  );
  assert.throws(() => parseDataType("enum8('a' = x)"), TypeSyntaxError);
});
