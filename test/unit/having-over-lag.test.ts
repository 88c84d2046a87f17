/** havingOverLag: which HAVING clauses move one level up, and what stays where. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SelectQuery } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { printExpression } from '../../src/sql/printer/format.ts';
import { havingOverLag } from '../../src/sql/translator/having-over-lag.ts';

const select = (sql: string) => parseQuery(sql) as SelectQuery;

test('HAVING without lag() stays as it is', () => {
  const q = select('SELECT id, lag(id) AS l, count() AS c FROM s GROUP BY id HAVING c > 1');
  assert.equal(havingOverLag(q), q);
});

test('HAVING naming a lag() alias, directly or through another alias, moves up with LIMIT and SETTINGS', () => {
  for (const sql of [
    'SELECT id, lag(v) AS l FROM s GROUP BY id, v HAVING l < v LIMIT 3 SETTINGS max_threads = 1',
    'SELECT id, lag(v) AS l, l + 1 AS l1 FROM s GROUP BY id, v HAVING l1 < v LIMIT 3 SETTINGS max_threads = 1',
    'SELECT id FROM s GROUP BY id, v HAVING lags(v, 1, 2)[1] < v LIMIT 3 SETTINGS max_threads = 1',
  ]) {
    const out = havingOverLag(select(sql));
    assert.equal(out.where && printExpression(out.where), '__trb_having', sql);
    assert.equal(out.limit?.limit && printExpression(out.limit.limit), '3');
    assert.equal(out.settings?.[0]?.name, 'max_threads');
    assert.equal(out.from?.kind, 'SubqueryTable');
    const inner = out.from?.kind === 'SubqueryTable' ? (out.from.query as SelectQuery) : undefined;
    assert.equal(inner?.having, undefined);
    assert.equal(inner?.limit, undefined);
    assert.ok(inner?.groupBy);
  }
});
