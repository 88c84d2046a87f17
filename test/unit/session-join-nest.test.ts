/** nestSessionJoin: `session(kv, t, 5s) AS a JOIN ...` as a session over a subquery running the join. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SelectQuery } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { print } from '../../src/sql/printer/format.ts';
import { nestSessionJoin } from '../../src/streaming/session-join-nest.ts';

const changelogs = new Set(['kv_l', 'kv_r']);
/** The printed query on one line. */
const flat = (q: SelectQuery) => print(q).replace(/\s+/g, ' ').replaceAll('( ', '(').replaceAll(' )', ')');
const nest = (sql: string) =>
  nestSessionJoin(parseQuery(sql) as SelectQuery, (_db, name) => changelogs.has(name));

test('the join moves into a subquery selecting each column the query names once; items keep their names', () => {
  const out = nest(
    'SELECT window_start, window_end, b.kk, count(), sum(j) AS total FROM session(kv_l, t, 5s, 20s) AS a LEFT JOIN kv_r AS b ON a.k = b.kk WHERE j > 0 PARTITION BY b.kk GROUP BY window_start, window_end HAVING sum(j) > 1',
  );
  assert.equal(
    flat(out),
    'SELECT window_start, window_end, __sj1 AS `b.kk`, count(), sum(__sj2) AS total FROM session((SELECT a.t AS __sj0, b.kk AS __sj1, j AS __sj2 FROM kv_l AS a LEFT JOIN kv_r AS b ON a.k = b.kk), __sj0, 5s, 20s) AS a WHERE __sj2 > 0 PARTITION BY __sj1 GROUP BY window_start, window_end HAVING sum(__sj2) > 1',
  );
});

test("without a time column the left side's _tp_time; start and end conditions read the left side", () => {
  const out = nest(
    "SELECT window_start, count() FROM session(kv_l, 5s, [k = 'start', k = 'end')) AS a JOIN kv_r AS b ON a.k = b.kk GROUP BY window_start",
  );
  assert.match(
    flat(out),
    /FROM session\(\(SELECT a\._tp_time AS __sj0, a\.k AS __sj1 FROM kv_l AS a (INNER )?JOIN kv_r AS b ON a\.k = b\.kk\), __sj0, 5s, \[__sj1 = 'start', __sj1 = 'end'\)\) AS a/,
  );
});

test('other FROMs stay as they are: an append stream on the left, no join, another window', () => {
  for (const sql of [
    'SELECT window_start, count() FROM session(app, t, 5s) AS a JOIN kv_r AS b ON a.k = b.kk GROUP BY window_start',
    'SELECT window_start, count() FROM session(kv_l, t, 5s) GROUP BY window_start',
    'SELECT window_start, count() FROM tumble(kv_l, t, 5s) AS a JOIN kv_r AS b ON a.k = b.kk GROUP BY window_start',
  ]) {
    const q = parseQuery(sql) as SelectQuery;
    assert.equal(
      nestSessionJoin(q, (_db, name) => changelogs.has(name)),
      q,
      sql,
    );
  }
});
