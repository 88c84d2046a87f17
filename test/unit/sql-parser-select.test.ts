import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EmitClause, FromItem, SelectQuery } from '../../src/sql/ast/query.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';
import { formatSql } from '../../src/sql/printer/format.ts';
import { bin, call, id, num, roundTrip, stmt, str } from '../helpers/sql-ast.ts';

function select(text: string): SelectQuery {
  const s = stmt(text);
  assert.equal(s.kind, 'Select');
  return s as SelectQuery;
}

function from(text: string): FromItem {
  const f = select(text).from;
  assert.ok(f);
  return f;
}

function emit(text: string): Omit<EmitClause, 'span'> {
  const e = select(`select count() from s ${text}`).emit;
  assert.ok(e);
  return e;
}

describe('SELECT clauses', () => {
  test('keywords are case-insensitive, clauses in Proton order', () => {
    const q = select(
      'SeLeCt a, b AS c, d e FrOm s WHERE a > 1 PARTITION BY k GROUP BY a HAVING count() > 1 ORDER BY a LIMIT 5',
    );
    assert.deepEqual(q.columns, [
      id('a'),
      { kind: 'Alias', expr: id('b'), alias: 'c' },
      { kind: 'Alias', expr: id('d'), alias: 'e' },
    ]);
    assert.deepEqual(q.where, bin('>', id('a'), num('1')));
    assert.deepEqual(q.partitionBy, [id('k')]);
    assert.deepEqual(q.groupBy, { kind: 'GroupBy', items: [id('a')], withTotals: false });
    assert.deepEqual(q.limit, { kind: 'Limit', limit: num('5'), withTies: false });
    roundTrip(
      'select a, b as c from s where a > 1 partition by k group by a having count() > 1 order by a limit 5',
    );
  });

  test('DISTINCT, DISTINCT ON, trailing comma before FROM', () => {
    assert.equal(select('select distinct a from t').distinct, true);
    assert.deepEqual(select('select distinct on (a) a, b from t').distinctOn, [id('a')]);
    assert.deepEqual(select('select id, name, from t').columns, [id('id'), id('name')]);
  });

  test('WITH: CTEs and named expressions', () => {
    const q = select('with c as (select 1 from t), 5 as five select * from c');
    assert.equal(q.with?.[0]?.kind, 'Cte');
    assert.deepEqual(q.with?.[1], { kind: 'WithExpr', expr: num('5'), name: 'five' });
    roundTrip('with c as (select 1 from t), 5 as five select * from c');
  });

  test('subqueries in FROM, IN and scalar position', () => {
    const f = from('select * from (select a from t) as sub');
    assert.equal(f.kind, 'SubqueryTable');
    assert.equal(f.kind === 'SubqueryTable' && f.alias, 'sub');
    roundTrip('select (select max(a) from t) as m from s where x in (select x from u)');
  });

  test('UNION ALL / DISTINCT / plain, and parenthesised members', () => {
    const u = stmt('select 1 union all select 2 union distinct select 3 union select 4');
    assert.equal(u.kind, 'Union');
    assert.deepEqual(u.kind === 'Union' && u.ops, ['UNION ALL', 'UNION DISTINCT', 'UNION']);
    roundTrip('(select 1 union all select 2) union all select 3');
  });

  test('GROUP BY WITH ROLLUP / CUBE / TOTALS, ROLLUP(...), GROUPING SETS', () => {
    assert.deepEqual(select('select a from t group by a with rollup').groupBy, {
      kind: 'GroupBy',
      items: [id('a')],
      modifier: 'ROLLUP',
      withTotals: false,
    });
    assert.deepEqual(select('select a from t group by a with cube with totals').groupBy, {
      kind: 'GroupBy',
      items: [id('a')],
      modifier: 'CUBE',
      withTotals: true,
    });
    assert.deepEqual(select('select a from t group by rollup(a, b)').groupBy?.modifier, 'ROLLUP');
    assert.equal(select('select a from t group by grouping sets ((a), (a, b))').groupBy?.groupingSets, true);
    roundTrip('select a from t group by a with rollup with totals');
    roundTrip('select a from t group by grouping sets ((a), (a, b))');
  });

  test('ORDER BY with direction, NULLS, COLLATE, WITH FILL', () => {
    const q = select(
      "select a from t order by a desc nulls last, b asc collate 'en', c with fill from 1 to 10 step 2",
    );
    assert.deepEqual(q.orderBy?.[0], { kind: 'OrderItem', expr: id('a'), direction: 'DESC', nulls: 'LAST' });
    assert.equal(q.orderBy?.[1]?.collate, 'en');
    assert.deepEqual(q.orderBy?.[2]?.fill, { from: num('1'), to: num('10'), step: num('2') });
    roundTrip(
      "select a from t order by a desc nulls last, b asc collate 'en', c with fill from 1 to 10 step 2",
    );
  });

  test('LIMIT n OFFSET m, LIMIT m, n, LIMIT n BY, OFFSET alone, WITH TIES', () => {
    assert.deepEqual(select('select a from t limit 10 offset 5').limit, {
      kind: 'Limit',
      limit: num('10'),
      offset: num('5'),
      withTies: false,
    });
    assert.deepEqual(select('select a from t limit 5, 10').limit, {
      kind: 'Limit',
      limit: num('10'),
      offset: num('5'),
      withTies: false,
    });
    const q = select('select a from t order by a limit 2 by a limit 10');
    assert.deepEqual(q.limitBy, { kind: 'LimitBy', limit: num('2'), by: [id('a')] });
    assert.deepEqual(q.limit?.limit, num('10'));
    assert.equal(select('select a from t order by a limit 3 with ties').limit?.withTies, true);
    roundTrip('select s, emit_version() as version from t group by s order by s limit 2 by version');
    roundTrip('select a from t order by a offset 5');
  });

  test('SETTINGS (several clauses merge) and FORMAT', () => {
    const q = select(
      "select a from t settings query_mode = 'table' settings max_threads = 2 format JSONEachRow",
    );
    assert.deepEqual(
      q.settings?.map((s) => s.name),
      ['query_mode', 'max_threads'],
    );
    assert.equal(q.format, 'JSONEachRow');
    roundTrip("select a from t settings query_mode = 'table', max_threads = 2 format JSONEachRow");
  });

  test('WINDOW clause', () => {
    roundTrip('select sum(x) over w from t window w as (partition by k order by t)');
  });
});

describe('FROM: tables, table functions, joins', () => {
  test('db.table, aliases with and without AS, FINAL', () => {
    assert.deepEqual(from('select * from default.clicks c'), {
      kind: 'Table',
      database: 'default',
      name: 'clicks',
      alias: 'c',
    });
    assert.deepEqual(from('select * from t final'), { kind: 'Table', name: 't', final: true });
  });

  test('table functions: table, tumble, hop, session, dedup, changelog, any call', () => {
    assert.deepEqual(from('select * from table(s)'), {
      kind: 'TableFunction',
      name: 'table',
      args: [id('s')],
    });
    const t = from('select * from tumble(table(s), ts, 5s)');
    assert.deepEqual(t.kind === 'TableFunction' && t.args[0], call('table', id('s')));
    for (const f of [
      'hop(s, ts, interval 1 second, interval 5 second)',
      "session(s, ts, 5s, [location = 'ca', location = 'sh'))",
      'dedup(s, id, 10s, 100)',
      'changelog(s, k, true)',
      'numbers(10)',
      'tumble((select * from s), 5s)',
    ]) {
      const f2 = from(`select * from ${f} as w`);
      assert.equal(f2.kind, 'TableFunction', f);
      roundTrip(`select * from ${f} as w`);
    }
  });

  test('a reserved word followed by ( names a table function: FROM values(...)', () => {
    assert.deepEqual(from("select * from VALUES('x int', 1, 2)"), {
      kind: 'TableFunction',
      name: 'VALUES',
      args: [str('x int'), num('1'), num('2')],
    });
    assert.throws(() => parseStatement('select * from values'), /stream name/);
  });

  test('join kinds and strictness in either order; ON and USING', () => {
    const cases: [string, string, string | undefined][] = [
      ['join', 'INNER', undefined],
      ['inner join', 'INNER', undefined],
      ['left join', 'LEFT', undefined],
      ['left outer join', 'LEFT', undefined],
      ['right join', 'RIGHT', undefined],
      ['full outer join', 'FULL', undefined],
      ['asof join', 'INNER', 'ASOF'],
      ['left asof join', 'LEFT', 'ASOF'],
      ['latest join', 'INNER', 'LATEST'],
      ['inner latest join', 'INNER', 'LATEST'],
      ['left all join', 'LEFT', 'ALL'],
      ['any left join', 'LEFT', 'ANY'],
      ['inner all join', 'INNER', 'ALL'],
    ];
    for (const [words, kind, strictness] of cases) {
      const j = from(`select * from a ${words} b on a.k = b.k`);
      assert.equal(j.kind, 'Join', words);
      if (j.kind !== 'Join') continue;
      assert.equal(j.joinKind, kind, words);
      assert.equal(j.strictness, strictness, words);
      roundTrip(`select * from a ${words} b on a.k = b.k`);
    }
    const c = from('select * from a cross join b');
    assert.equal(c.kind === 'Join' && c.joinKind, 'CROSS');
    const u = from('select * from a join b using (k, j)');
    assert.deepEqual(u.kind === 'Join' && u.using, [id('k'), id('j')]);
    const g = from('select * from a global left join b on a.k = b.k');
    assert.equal(g.kind === 'Join' && g.global, true);
  });

  test('comma joins and ARRAY JOIN', () => {
    const j = from(
      'select * from tumble(m, 60s), k8s inner join default.m using (_tp_time) array join arr as x',
    );
    assert.equal(j.kind, 'ArrayJoin');
    roundTrip('select * from tumble(m, 60s), k8s inner join default.m using (_tp_time) array join arr as x');
    roundTrip('select * from a left array join arr');
  });

  test('join with table() on the right and date_diff_within', () => {
    roundTrip(
      'select * from left_s as l join right_s as r on l.k = r.k and date_diff_within(10s, l.ts, r.ts)',
    );
  });
});

describe('EMIT', () => {
  test('every policy of §1.6', () => {
    assert.deepEqual(emit('emit stream'), {
      kind: 'Emit',
      mode: 'STREAM',
      afterWatermark: false,
      onUpdate: false,
    });
    assert.deepEqual(emit('emit changelog'), {
      kind: 'Emit',
      mode: 'CHANGELOG',
      afterWatermark: false,
      onUpdate: false,
    });
    assert.deepEqual(emit('emit after watermark'), { kind: 'Emit', afterWatermark: true, onUpdate: false });
    assert.deepEqual(emit('emit periodic 2s').periodic, {
      kind: 'Interval',
      value: num('2'),
      unit: 'SECOND',
      shorthand: true,
    });
    assert.deepEqual(emit('EMIT STREAM PERIODIC INTERVAL 2 SECOND').periodic, {
      kind: 'Interval',
      value: num('2'),
      unit: 'SECOND',
      shorthand: false,
    });
    assert.equal(emit('emit on update').onUpdate, true);
    assert.equal(emit('emit periodic 1s on update').onUpdate, true);
    assert.ok(emit('emit timeout 1s').timeout);
    assert.deepEqual(emit('emit last 5m on proctime').lastOnProctime, true);
  });

  test('WITH DELAY and the old AND DELAY give the same tree', () => {
    const a = emit('emit stream after watermark with delay interval 2 second');
    const b = emit('emit stream after watermark and delay interval 2 second');
    assert.deepEqual(a, b);
    assert.deepEqual(a.delay, { kind: 'Interval', value: num('2'), unit: 'SECOND', shorthand: false });
  });

  test('policies chained with AND, in any order', () => {
    const a = emit('emit after watermark with delay 2s and last 6s');
    assert.ok(a.delay && a.last && a.afterWatermark);
    assert.deepEqual(emit('emit last 5m and periodic 5s'), emit('emit periodic 5s and last 5m'));
    assert.ok(emit('emit changelog periodic 1s').periodic);
  });

  test('newer forms: AFTER WINDOW CLOSE, PERIODIC .. REPEAT, ON UPDATE WITH BATCH', () => {
    assert.equal(emit('emit after window close with delay 1s').windowClose, true);
    assert.equal(emit('emit periodic 1s repeat').repeat, true);
    assert.ok(emit('emit on update with batch 1s').onUpdateBatch);
  });

  test('EMIT comes after LIMIT and before SETTINGS', () => {
    const q = select("select id from s group by id limit 4 emit periodic 5s settings seek_to = 'earliest'");
    assert.ok(q.limit && q.emit && q.settings);
    roundTrip("select id from s group by id limit 4 emit periodic 5s settings seek_to = 'earliest'");
  });

  test('a policy given twice is an error', () => {
    assert.throws(
      () => parseStatement('select 1 from s emit periodic 1s and periodic 2s'),
      /Can not use repeat 'PERIODIC' in EMIT clause at line 1, column 38/,
    );
  });

  test('canonical print: mode, AFTER WATERMARK WITH DELAY, PERIODIC, ON UPDATE, TIMEOUT, LAST joined by AND', () => {
    assert.equal(
      formatSql('select count() from s emit stream delay 2s and after watermark and last 6s', {
        pretty: false,
      }),
      'SELECT count() FROM s EMIT STREAM AFTER WATERMARK WITH DELAY 2s AND LAST 6s',
    );
  });
});

describe('formatting', () => {
  test('pretty layout: clause keywords on their own lines, bodies indented', () => {
    assert.equal(
      formatSql(
        "select a.id, max(a.value) from hop(s, ts, 3s, 5s) as a join table(d) as b on a.id = b.id where b.type = 'roof' group by a.id",
      ),
      [
        'SELECT',
        '  a.id, max(a.value)',
        'FROM',
        '  hop(s, ts, 3s, 5s) AS a',
        'INNER JOIN table(d) AS b ON a.id = b.id',
        'WHERE',
        "  b.type = 'roof'",
        'GROUP BY',
        '  a.id',
      ].join('\n'),
    );
  });

  test('string values stay exact', () => {
    assert.deepEqual(select("select 'a''b'").columns, [str("a'b")]);
  });
});
