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
      name: 'my_plus',
      type: 'javascript',
      arguments: [{ name: 'v', type: 'float64' }],
      return_type: 'float64',
      source: 'function my_plus(v) { return v; }',
    }),
  ].map((d) => [d.name, d]),
);
const rewrite = (sql: string, streaming = true) =>
  print(rewriteAggregateUdfs(parseQuery(sql), (n) => defs.get(n), streaming) as Query, { pretty: false });

test('an aggregate call folds its arguments with __trb_uda_values; a bare select item keeps its name', () => {
  assert.equal(
    rewrite('SELECT k, sec(v), sec(v + 1) * 2 AS twice FROM s GROUP BY k'),
    'SELECT k, __trb_uda_sec(__trb_uda_values(v)) AS `sec(v)`, __trb_uda_sec(__trb_uda_values(v + 1)) * 2 AS twice FROM s GROUP BY k',
  );
  assert.equal(
    rewrite('SELECT * FROM (SELECT sec(DISTINCT v) FROM s)'),
    'SELECT * FROM (SELECT __trb_uda_sec(group_uniq_array(v)) AS `sec(DISTINCT v)` FROM s)',
  );
});

test('queries without aggregates are returned as they are', () => {
  const q = parseQuery('SELECT my_plus(v) FROM s');
  assert.equal(
    rewriteAggregateUdfs(q, (n) => defs.get(n), true),
    q,
  );
});

test('wrong arity, a custom emit and OVER are refused with their codes', () => {
  const refused = (sql: string, code: number, streaming = true) =>
    assert.throws(
      () => rewrite(sql, streaming),
      (e: unknown) => isTributaryError(e) && e.code === code,
      sql,
    );
  refused('SELECT sec(v, 1) FROM s', 42);
  refused('SELECT stock(p) FROM s', 42);
  refused('SELECT stock(t, p) FROM s', 48);
  refused('SELECT stock(t, p) FROM table(s)', 2534, false);
  refused('SELECT sec(v) OVER (PARTITION BY k) FROM s', 48);
});
