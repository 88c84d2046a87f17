import { type DataType, parseDataType, printDataType, type TypeArg } from './data-type.ts';

/**
 * The data-type names of both dialects, as pairs [ClickHouse, Proton]. Proton registers lowercase
 * snake_case names and keeps the ClickHouse spellings as aliases (streaming-sql-notes.md §2.1).
 */
const PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['Int8', 'int8'],
  ['Int16', 'int16'],
  ['Int32', 'int32'],
  ['Int64', 'int64'],
  ['Int128', 'int128'],
  ['Int256', 'int256'],
  ['UInt8', 'uint8'],
  ['UInt16', 'uint16'],
  ['UInt32', 'uint32'],
  ['UInt64', 'uint64'],
  ['UInt128', 'uint128'],
  ['UInt256', 'uint256'],
  ['Float32', 'float32'],
  ['Float64', 'float64'],
  ['BFloat16', 'bfloat16'],
  ['Bool', 'bool'],
  ['String', 'string'],
  ['FixedString', 'fixed_string'],
  ['Date', 'date'],
  ['Date32', 'date32'],
  ['DateTime', 'datetime'],
  ['DateTime32', 'datetime32'],
  ['DateTime64', 'datetime64'],
  ['Time', 'time'],
  ['Time64', 'time64'],
  ['Decimal', 'decimal'],
  ['Decimal32', 'decimal32'],
  ['Decimal64', 'decimal64'],
  ['Decimal128', 'decimal128'],
  ['Decimal256', 'decimal256'],
  ['UUID', 'uuid'],
  ['IPv4', 'ipv4'],
  ['IPv6', 'ipv6'],
  ['Enum', 'enum'],
  ['Enum8', 'enum8'],
  ['Enum16', 'enum16'],
  ['Array', 'array'],
  ['Map', 'map'],
  ['Tuple', 'tuple'],
  ['Nested', 'nested'],
  ['Nullable', 'nullable'],
  ['LowCardinality', 'low_cardinality'],
  ['JSON', 'json'],
  ['Object', 'object'],
  ['Dynamic', 'dynamic'],
  ['Variant', 'variant'],
  ['Nothing', 'nothing'],
  ['AggregateFunction', 'aggregate_function'],
  ['SimpleAggregateFunction', 'simple_aggregate_function'],
  ['IntervalNanosecond', 'interval_nanosecond'],
  ['IntervalMicrosecond', 'interval_microsecond'],
  ['IntervalMillisecond', 'interval_millisecond'],
  ['IntervalSecond', 'interval_second'],
  ['IntervalMinute', 'interval_minute'],
  ['IntervalHour', 'interval_hour'],
  ['IntervalDay', 'interval_day'],
  ['IntervalWeek', 'interval_week'],
  ['IntervalMonth', 'interval_month'],
  ['IntervalQuarter', 'interval_quarter'],
  ['IntervalYear', 'interval_year'],
  ['Point', 'point'],
  ['Ring', 'ring'],
  ['LineString', 'line_string'],
  ['MultiLineString', 'multi_line_string'],
  ['Polygon', 'polygon'],
  ['MultiPolygon', 'multi_polygon'],
];

/** SQL-style aliases Proton keeps (case-insensitive), mapped to the Proton name. */
const ALIASES: Readonly<Record<string, string>> = {
  int: 'int32',
  integer: 'int32',
  uint: 'uint32',
  smallint: 'int16',
  bigint: 'int64',
  byte: 'int8',
  tinyint: 'int8',
  float: 'float32',
  double: 'float64',
  real: 'float32',
  varchar: 'string',
  text: 'string',
  boolean: 'bool',
  inet4: 'ipv4',
  inet6: 'ipv6',
  // MySQL's names, which the engine and Proton accept too.
  char: 'string',
  character: 'string',
  nchar: 'string',
  nvarchar: 'string',
  varchar2: 'string',
  tinytext: 'string',
  mediumtext: 'string',
  longtext: 'string',
  blob: 'string',
  clob: 'string',
  tinyblob: 'string',
  mediumblob: 'string',
  longblob: 'string',
  bytea: 'string',
  varbinary: 'string',
  int1: 'int8',
  mediumint: 'int32',
  bit: 'uint64',
  set: 'uint64',
  single: 'float32',
  dec: 'decimal',
  numeric: 'decimal',
  fixed: 'decimal',
};

const normal = (name: string) => name.toLowerCase().replace(/_/g, '');
const BY_NORMAL = new Map<string, readonly [string, string]>();
for (const pair of PAIRS) BY_NORMAL.set(normal(pair[1]), pair);
for (const [alias, proton] of Object.entries(ALIASES)) {
  const pair = BY_NORMAL.get(normal(proton));
  if (pair) BY_NORMAL.set(normal(alias), pair);
}

/** The [ClickHouse, Proton] names of a type name in either spelling, or undefined if unknown. */
export function lookupTypeName(name: string): readonly [string, string] | undefined {
  return BY_NORMAL.get(normal(name));
}

/** Every Proton type name, for suggestions in error messages. */
/** Every [ClickHouse, Proton] pair of type names. */
export const TYPE_NAME_PAIRS: ReadonlyArray<readonly [string, string]> = PAIRS;

export const PROTON_TYPE_NAMES: readonly string[] = [...PAIRS.map((p) => p[1]), ...Object.keys(ALIASES)];

export class UnknownTypeError extends Error {
  constructor(readonly typeName: string) {
    super(`Unknown data type ${typeName}`);
    this.name = 'UnknownTypeError';
  }
}

function rename(t: DataType, side: 0 | 1): DataType {
  const pair = lookupTypeName(t.name);
  if (!pair) throw new UnknownTypeError(t.name);
  // aggregate_function(sum, int64): the first argument names a function, not a type.
  const isAggregate = pair[0] === 'AggregateFunction' || pair[0] === 'SimpleAggregateFunction';
  const args = t.args.map((a, i): TypeArg => {
    if (isAggregate && i === 0 && a.kind === 'type') return { kind: 'ident', name: printDataType(a.type) };
    if (a.kind === 'type') return { kind: 'type', type: rename(a.type, side) };
    if (a.kind === 'named') return { ...a, type: rename(a.type, side) };
    return a;
  });
  return { name: pair[side], args, parens: t.parens };
}

/** A type in either spelling, as the engine (ClickHouse) writes it: `low_cardinality(string)` -> `LowCardinality(String)`. */
export function toClickHouseType(text: string): string {
  return printDataType(rename(parseDataType(text), 0));
}

/** A type as Proton writes it: `Nullable(DateTime64(3, 'UTC'))` -> `nullable(datetime64(3, 'UTC'))`. */
export function toProtonType(text: string): string {
  return printDataType(rename(parseDataType(text), 1));
}
