/**
 * The query rewrites behind LEFT JOINs of changelog inputs, without an engine:
 * - an aggregation written over such a join becomes an aggregation over the join as its subquery
 *   (left-changelog-join-nesting.ts), the names it reads selected by the subquery;
 * - which left rows a right side's change can alter: the ON's equal keys with an earlier side
 *   every row of which is kept (join-left-touch.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JoinExpr, SelectQuery } from '../../src/sql/ast/query.ts';
import type { Statement } from '../../src/sql/ast/statement.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { print } from '../../src/sql/printer/format.ts';
import type { StreamDefinition } from '../../src/stream/stream-definition.ts';
import { leftJoinTemplates } from '../../src/streaming/join-left-netting.ts';
import { leftJoinRestriction, leftJoinTouch } from '../../src/streaming/join-left-touch.ts';
import { joinSideSql } from '../../src/streaming/join-side-read.ts';
import { nestLeftChangelogJoin } from '../../src/streaming/left-changelog-join-nesting.ts';

const kinds: Record<string, boolean> = { kva: true, kvb: true, kvc: true, app: false };
const isChangelogInput = (_db: string | undefined, name: string) => kinds[name];
const nest = (sql: string) =>
  print(nestLeftChangelogJoin(parseQuery(sql) as SelectQuery, isChangelogInput) as Statement, {
    pretty: false,
  });

test('an aggregation over a LEFT JOIN of changelog inputs reads the join as its subquery', () => {
  assert.equal(
    nest(
      'SELECT a.k, count() AS n, sum(b.j) FROM kva AS a LEFT JOIN kvb AS b ON a.k = b.kk WHERE a.i > 1 GROUP BY a.k HAVING n > 0',
    ),
    nest(
      'SELECT k, count() AS n, sum(j) AS `sum(b.j)` FROM (SELECT a.k AS k, b.j AS j FROM kva AS a LEFT JOIN kvb AS b ON a.k = b.kk WHERE a.i > 1) AS __trb_left_join GROUP BY k HAVING n > 0',
    ),
  );
  // Two columns named alike: the subquery names them apart.
  assert.match(
    nest('SELECT a.k, max(b.k) FROM kva AS a LEFT JOIN kvb AS b ON a.k = b.k GROUP BY a.k'),
    /a\.k AS __trb_a_k, b\.k AS __trb_b_k/,
  );
  // A window over the first side becomes a window over the subquery, its time column selected.
  assert.match(
    nest(
      'SELECT window_start, count() FROM tumble(kva, 5s) AS a LEFT JOIN kvb AS b ON a.k = b.kk GROUP BY window_start',
    ),
    /FROM tumble\(\(SELECT a\._tp_time AS __trb_a__tp_time FROM kva AS a LEFT JOIN kvb AS b ON a\.k = b\.kk\), __trb_a__tp_time, 5s\)/,
  );
});

test('queries that are not an aggregation over a LEFT JOIN of changelog inputs stay as they are', () => {
  for (const sql of [
    'SELECT a.k, b.j FROM kva AS a LEFT JOIN kvb AS b ON a.k = b.kk',
    'SELECT count() FROM kva AS a INNER JOIN kvb AS b ON a.k = b.kk',
    'SELECT count() FROM app AS a LEFT JOIN kvb AS b ON a.k = b.kk',
    'SELECT count() FROM kva AS a LEFT JOIN table(kvb) AS b ON a.k = b.kk',
    'WITH c AS (SELECT * FROM kvb) SELECT count() FROM kva AS a LEFT JOIN c ON a.k = c.kk',
  ]) {
    const q = parseQuery(sql) as SelectQuery;
    assert.equal(nestLeftChangelogJoin(q, isChangelogInput), q, sql);
  }
});

test("a right side's change reads the rows of the earlier side its ON's equal keys name", () => {
  const sides = [
    { alias: 'a', columns: new Set(['i', 'k', 'k2']) },
    { alias: 'b', columns: new Set(['j', 'kk', 'kk2']) },
    { alias: 'c', columns: new Set(['m', 'kc']) },
  ];
  const on = (sql: string) =>
    ((parseQuery(`SELECT 1 FROM a JOIN b ON ${sql}`) as SelectQuery).from as JoinExpr).on;
  assert.deepEqual(leftJoinTouch(on('a.k = b.kk AND kk2 = k2 AND b.j > 1'), sides, 1, [false, true]), {
    side: 0,
    columns: ['k', 'k2'],
    by: 1,
    byColumns: ['kk', 'kk2'],
  });
  // c joins on b's column, b itself LEFT-attached: leaving out b rows would add defaults rows.
  assert.equal(leftJoinTouch(on('b.kk = c.kc'), sides, 2, [false, true, true]), undefined);
  // ... but joined INNER, b's rows can be left out.
  assert.deepEqual(leftJoinTouch(on('b.kk = c.kc'), sides, 2, [false, false, true])?.side, 1);
  // No equality with a plain column of each side.
  assert.equal(leftJoinTouch(on('lower(a.k) = b.kk'), sides, 1, [false, true]), undefined);
  assert.equal(leftJoinTouch(on('a._tp_time = b._tp_time'), sides, 1, [false, true]), undefined);
});

test("the netted part of a right side's change reads the touched left keys, the same ones in both of its terms", () => {
  const def = (name: string, columns: string[], key: string) =>
    ({
      db: 'default',
      name,
      mode: 'versioned_kv',
      columns: [...columns, '_tp_time'].map((c) => ({ name: c, type: 'string' })),
      keyColumns: [key],
      versionColumn: '_tp_sn',
      storageType: 'hybrid',
    }) as unknown as StreamDefinition;
  const sides = [
    { def: def('a', ['i', 'k'], 'i'), kind: 'kv' as const, kept: 'st.ka' },
    { def: def('b', ['j', 'kk'], 'j'), kind: 'kv' as const, kept: 'st.kb' },
  ];
  const restriction = leftJoinRestriction(
    { side: 0, columns: ['k'], by: 1, byColumns: ['kk'] },
    (i) => sides[i],
  );
  assert.ok(restriction);
  const read = (i: number) => joinSideSql(sides[i]!.def, i, 'kv', sides[i]!.kept);
  const t = `SELECT i, j, toInt8(a._tp_delta) AS __trb_sign FROM ${read(0)} AS a LEFT JOIN ${read(1)} AS b ON a.k = b.kk`;
  const { netted, tail } = leftJoinTemplates(t, ['i', 'j', '__trb_sign'], [0, 1], undefined, restriction);
  // The tail (a left side's change) reads the left side as it is.
  assert.ok(tail.text.includes(restriction.from));
  // Both terms read the restricted left side, as of the same point, through the same touched keys.
  assert.ok(!netted.text.includes(restriction.from));
  const terms = netted.text.split(restriction.to.replaceAll('__TRB_AT_0__', '__TRB_AT2_0__'));
  assert.equal(terms.length, 2, 'the earlier term reads the restricted side as of __TRB_AT2_0__');
  assert.equal(netted.text.split(restriction.to).length, 2, 'the later term reads it as of __TRB_AT_0__');
  assert.match(
    restriction.to,
    /IN \(SELECT `?kk`? FROM .*__TRB_LO_1__.* UNION ALL SELECT `?kk`? FROM .*__TRB_HI_1__/s,
  );
  assert.ok(!/__TRB_AT2?_1__/.test(restriction.to.slice(restriction.to.indexOf(' IN (SELECT'))));
});
