import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SelectQuery } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { print } from '../../src/sql/printer/format.ts';
import { flatTailSelect, withRangeMarkers } from '../../src/streaming/flat-tail.ts';

const select = (sql: string) => parseQuery(sql) as SelectQuery;

test('a plain tail gets the range in its WHERE and ORDER BY _tp_sn', () => {
  const flat = flatTailSelect(select('SELECT k, v FROM s WHERE v > 0 OR k = 1'));
  assert.ok(flat);
  const text = print(flat);
  assert.match(text, /_tp_sn > 7357735773577357001/);
  assert.match(text, /_tp_sn <= 7357735773577357002/);
  assert.match(text, /ORDER BY\s+_tp_sn/);
  // The user's condition stays one operand (its OR is not split by the AND).
  const marked = withRangeMarkers(text, 0);
  assert.ok(marked?.includes('__TRB_LO_0__') && marked.includes('__TRB_HI_0__'), marked);
  assert.ok(flatTailSelect(select('SELECT * FROM s')));
});

test('tails with clauses of their own, subqueries or a name _tp_sn are not flat', () => {
  for (const sql of [
    'SELECT DISTINCT k FROM s',
    'SELECT k FROM s ORDER BY k',
    'SELECT k FROM s LIMIT 3',
    'SELECT k FROM s GROUP BY k',
    'SELECT k FROM s PREWHERE v > 0',
    'WITH 1 AS one SELECT k FROM s',
    'SELECT k FROM s WHERE k IN (SELECT k FROM t)',
    'SELECT (SELECT 1) AS one FROM s',
    'SELECT k AS _tp_sn FROM s',
    'SELECT k FROM (SELECT k FROM s)',
    'SELECT k FROM s AS a JOIN t AS b ON a.k = b.k',
    'SELECT array_join([1, 2]) AS x, k FROM s',
    'SELECT arrayJoin([1, 2]) AS x FROM s',
    'SELECT k, running_difference(v) FROM s',
    'SELECT k FROM s WHERE rowNumberInAllBlocks() < 3',
    'SELECT k, neighbor(v, 1) FROM s',
    'SELECT k, row_number() OVER () FROM s',
  ])
    assert.equal(flatTailSelect(select(sql)), undefined, sql);
});

test('the markers replace the bounds only when each appears exactly once', () => {
  assert.equal(withRangeMarkers('SELECT 1 WHERE _tp_sn > 7357735773577357001', 0), undefined);
  assert.equal(
    withRangeMarkers(
      'SELECT 7357735773577357001 WHERE _tp_sn > 7357735773577357001 AND _tp_sn <= 7357735773577357002',
      0,
    ),
    undefined,
  );
  assert.equal(
    withRangeMarkers('SELECT a WHERE _tp_sn > 7357735773577357001 AND _tp_sn <= 7357735773577357002', 2),
    'SELECT a WHERE _tp_sn > __TRB_LO_2__ AND _tp_sn <= __TRB_HI_2__',
  );
});
