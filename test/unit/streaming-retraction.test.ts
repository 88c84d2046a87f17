/**
 * Retracting aggregations without the engine: which aggregates retract (retraction.ts), and the
 * state a retracting split keeps (aggregate-split.ts): the group keys, the non-constant argument
 * expressions and their net count.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SelectQuery } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { NET_COUNT, splitAggregation } from '../../src/streaming/aggregate-split.ts';
import { retractableBase } from '../../src/streaming/retraction.ts';

test('retractable aggregates: the base functions, their _if and distinct forms, engine spellings', () => {
  const cases: [string, string | undefined][] = [
    ['count', 'count'],
    ['count_if', 'count'],
    ['countIf', 'count'],
    ['count_distinct', 'count'],
    ['count_distinct_if', 'count'],
    ['sumIf', 'sum'],
    ['avg_if', 'avg'],
    ['argMinIf', 'arg_min'],
    ['arg_max_if', 'arg_max'],
    ['min_k', 'min_k'],
    ['max_k', 'max_k'],
    ['group_uniq_array', 'group_uniq_array'],
    ['groupUniqArray', 'group_uniq_array'],
    ['unique_exact_if', undefined],
    ['median', undefined],
    ['quantile', undefined],
    ['latest', undefined],
    ['earliest', undefined],
    ['top_k', undefined],
    ['group_array', undefined],
    ['uniqIf', undefined],
  ];
  for (const [name, base] of cases) assert.equal(retractableBase(name), base, name);
});

test('a retracting split keeps (keys, arguments, net count); constants stay in the call', () => {
  const q = parseQuery(
    'SELECT k, count(), sum(v), min_k(v, 3), count_if(v > 2), max(v) FROM s GROUP BY k',
  ) as SelectQuery;
  const split = splitAggregation(q, { window: false, retract: 'a changelog stream (s)' });
  assert.deepEqual(split.keyColumns, ['__k0']);
  // v and v > 2: two argument columns; count() and the constant 3 need none.
  assert.deepEqual(split.argumentColumns, ['__x0', '__x1']);
  assert.deepEqual(split.stateColumns, []);
  const foldNames = split.fold.columns.map((c) => (c.kind === 'Alias' ? c.alias : '?'));
  assert.deepEqual(foldNames, ['__k0', '__x0', '__x1', NET_COUNT]);
  const groupBy = split.fold.groupBy?.items.map((i) => (i.kind === 'Identifier' ? i.parts[0] : '?'));
  assert.deepEqual(groupBy, ['__k0', '__x0', '__x1']);
  const emitted = JSON.stringify(split.emit.columns);
  assert.match(emitted, /"name":"min_k","args":\[\{"kind":"Identifier","parts":\["__x0"\]/);
  assert.match(emitted, /"kind":"Number","text":"3"/);
});

test('a retracting split refuses an aggregate that cannot retract', () => {
  const q = parseQuery('SELECT latest(v) FROM s') as SelectQuery;
  assert.throws(
    () => splitAggregation(q, { window: false, retract: 'a versioned_kv stream (s)' }),
    (e: Error & { code?: number }) => e.code === 48 && /latest\(\) cannot retract/.test(e.message),
  );
});

test('a retracting split reads weighted tuples only when every aggregate allows it', () => {
  const split = (sql: string) =>
    splitAggregation(parseQuery(sql) as SelectQuery, { window: false, retract: 'a changelog stream (s)' });
  assert.equal(
    split('SELECT k, count(), count_if(v > 1), min(v), arg_max(k, v) FROM s GROUP BY k').weighted,
    true,
  );
  assert.equal(split('SELECT count(DISTINCT v), sum_distinct(v), group_uniq_array(v) FROM s').weighted, true);
  assert.equal(split('SELECT count(), sum(v) FROM s').weighted, false);
  assert.equal(split('SELECT min_k(v, 2) FROM s').weighted, false);
  assert.equal(split('SELECT count() FROM s HAVING avg(v) > 1').weighted, false);
  assert.match(
    JSON.stringify(split('SELECT count() FROM s').emit.columns),
    /"name":"to_uint64".*"name":"sum".*"__n"/,
  );
});
