import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import type { Query } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { print } from '../../src/sql/printer/format.ts';
import { rewriteAggregateUdfs } from '../../src/udf/aggregate-udf-rewrite.ts';
import { type UdfDefinition, udfDefinition } from '../../src/udf/udf-definition.ts';

const defs = new Map<string, UdfDefinition>(
  [
    udfDefinition({
      name: 'sec',
      type: 'javascript',
      is_aggregation: true,
      arguments: [{ name: 'v', type: 'float64' }],
      return_type: 'float64',
      source: '{ initialize() {}, process(v) {}, finalize() { return 1; } }',
    }),
    udfDefinition({
      name: 'stock',
      type: 'javascript',
      is_aggregation: true,
      arguments: [
        { name: 't', type: 'datetime64(3)' },
        { name: 'p', type: 'float64' },
      ],
      return_type: 'float64',
      source:
        '{ has_customized_emit: true, initialize() {}, process(t, p) { return 0; }, finalize() { return []; } }',
    }),
    udfDefinition({
      name: 'kept',
      type: 'javascript',
      is_aggregation: true,
      arguments: [{ name: 'v', type: 'float64' }],
      return_type: 'float64',
      source:
        '{ initialize() {}, process(v) {}, finalize() { return 1; }, serialize() { return ""; }, deserialize(s) {} }',
    }),
    udfDefinition({
      name: 'my_plus',
      type: 'javascript',
      arguments: [{ name: 'v', type: 'float64' }],
      return_type: 'float64',
      source: 'function my_plus(v) { return v; }',
    }),
  ].map((d) => [d.name, d]),
);
/** The source `s` of the queries: an append stream with these columns. */
const S = {
  columns: new Map([
    ['t', 'DateTime64(3)'],
    ['p', 'Float64'],
    ['v', 'Float64'],
  ]),
  changelog: false,
};
const rewrite = (sql: string, streaming = true) =>
  print(
    rewriteAggregateUdfs(
      parseQuery(sql),
      (n) => defs.get(n),
      streaming,
      (sel) => (sel.from ? S : undefined),
    ) as Query,
    {
      pretty: false,
    },
  );

test('an aggregate call folds its arguments with __trb_uda_values; a bare select item keeps its name', () => {
  assert.equal(
    rewrite('SELECT k, sec(v), sec(v + 1) * 2 AS twice FROM s GROUP BY k'),
    'SELECT k, __trb_uda_sec(__trb_uda_values(v), __trb_uda_deltas()) AS `sec(v)`, __trb_uda_sec(__trb_uda_values(v + 1), __trb_uda_deltas()) * 2 AS twice FROM s GROUP BY k',
  );
  assert.equal(
    rewrite('SELECT * FROM (SELECT sec(DISTINCT v) FROM s)'),
    'SELECT * FROM (SELECT __trb_uda_sec(group_uniq_array(v), __trb_uda_deltas()) AS `sec(DISTINCT v)` FROM s)',
  );
});

test('OVER (PARTITION BY) moves onto the collectors; an own emit becomes array_join of tagged values, emitting on update', () => {
  assert.equal(
    rewrite('SELECT k, sec(v) OVER (PARTITION BY i) FROM s GROUP BY k'),
    'SELECT k, __trb_uda_sec(__trb_uda_values(v) OVER (PARTITION BY i), __trb_uda_deltas()) AS `sec(v) OVER (...)` FROM s GROUP BY k',
  );
  assert.equal(
    rewrite('SELECT k, stock(t, p) AS st FROM s GROUP BY k'),
    'SELECT k, array_join(__trb_uda_stock(__trb_uda_values(to_uint64(__TRB_BATCH__)), __trb_uda_values(_tp_sn), __trb_uda_values(t), __trb_uda_values(p), to_uint64(__TRB_BATCH__))) AS st FROM s GROUP BY k EMIT ON UPDATE',
  );
});

test('column arguments are checked against the declared types when the source is known (43)', () => {
  const columns = new Map([
    ['t', 'DateTime64(6)'],
    ['i8', 'Int8'],
    ['p', 'Float64'],
  ]);
  const withSource = (sql: string) =>
    rewriteAggregateUdfs(
      parseQuery(sql),
      (n) => defs.get(n),
      true,
      () => ({ columns, changelog: false }),
    );
  // the precision of a datetime64 may differ
  withSource('SELECT stock(t, p) FROM s');
  assert.throws(
    () => withSource('SELECT stock(i8, p) FROM s'),
    (e: unknown) =>
      isTributaryError(e) &&
      e.code === 43 &&
      /Argument 1 of function stock must be datetime64\(3\), but it is int8/.test(e.message),
  );
});

test('queries without aggregates are returned as they are', () => {
  const q = parseQuery('SELECT my_plus(v) FROM s');
  assert.equal(
    rewriteAggregateUdfs(q, (n) => defs.get(n), true),
    q,
  );
});

test('wrong arity, misplaced custom emits and OVER with ORDER BY are refused with their codes', () => {
  const refused = (sql: string, code: number, streaming = true) =>
    assert.throws(
      () => rewrite(sql, streaming),
      (e: unknown) => isTributaryError(e) && e.code === code,
      sql,
    );
  refused('SELECT sec(v, 1) FROM s', 42);
  refused('SELECT stock(p) FROM s', 42);
  refused('SELECT stock(t, p), count() FROM s', 48);
  refused('SELECT stock(t, p), sec(p) FROM s', 48);
  refused('SELECT stock(t, p) FROM s EMIT PERIODIC 1s', 48);
  refused('SELECT stock(1, 2)', 48);
  assert.throws(
    () =>
      rewriteAggregateUdfs(
        parseQuery('SELECT stock(t, p) FROM kv'),
        (n) => defs.get(n),
        true,
        () => ({
          ...S,
          changelog: true,
        }),
      ),
    (e: unknown) => isTributaryError(e) && e.code === 48 && /append stream/.test(e.message),
  );
  refused('SELECT stock(t, p) FROM table(s)', 2534, false);
  refused('SELECT sec(v) OVER (PARTITION BY k ORDER BY v) FROM s', 48);
  refused('SELECT sec(v) OVER (PARTITION BY k) FROM table(s)', 48, false);
});

test('an aggregate defining serialize and deserialize collects its values and its serialized states', () => {
  assert.equal(
    rewrite('SELECT k, kept(v) FROM s GROUP BY k'),
    "SELECT k, __trb_uda_kept(__trb_uda_fvalues(v), __trb_uda_deltas(), __trb_uda_states(nullif('kept(v)', 'kept(v)'))) AS `kept(v)` FROM s GROUP BY k",
  );
  // DISTINCT keeps every value (no fold of a distinct set)
  assert.equal(
    rewrite('SELECT kept(DISTINCT v) FROM s'),
    'SELECT __trb_uda_kept(group_uniq_array(v), __trb_uda_deltas()) AS `kept(DISTINCT v)` FROM s',
  );
});
