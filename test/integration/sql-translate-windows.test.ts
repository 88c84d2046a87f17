/**
 * Golden translator tests for the window table functions (historical semantics), run on the engine
 * with DateTime64 time columns (which the engine's own tumble() refuses).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { translate } from '../../src/sql/translator/translate.ts';
import { type GoldenEngine, openGoldenEngine, resolver } from '../helpers/sql-engine.ts';

let g: GoldenEngine;
before(async () => {
  g = await openGoldenEngine();
});
after(async () => {
  await g.close();
});

const STAR = '* EXCEPT (_tp_sn, _tp_delta)';

describe('tumble', () => {
  test('tumble(s, time_col, INTERVAL ..) groups rows into fixed windows of the time column type', async () => {
    const rows = await g.check(
      'select window_start, window_end, count() as n, max(value) as m from tumble(clicks, ts, interval 5 second) group by window_start, window_end order by window_start',
      `SELECT window_start, window_end, count() AS n, max(value) AS m FROM (SELECT ${STAR}, CAST(toStartOfInterval(ts, INTERVAL 5 SECOND), toTypeName(ts)) AS window_start, window_start + INTERVAL 5 SECOND AS window_end FROM \`default\`.\`clicks\`) AS clicks GROUP BY window_start, window_end ORDER BY window_start`,
    );
    assert.deepEqual(rows, [
      ['2020-02-02 20:00:00.000', '2020-02-02 20:00:05.000', 3, 66],
      ['2020-02-02 20:00:10.000', '2020-02-02 20:00:15.000', 2, 67],
    ]);
    const header = await g.header(
      translate('select window_start, window_end from tumble(clicks, ts, 5s)', { resolver }),
    );
    assert.deepEqual(
      header.map((h) => h.type),
      ["DateTime64(3, 'UTC')", "DateTime64(3, 'UTC')"],
    );
  });

  test('the time column defaults to _tp_time; the shorthand interval works; table() inside works', async () => {
    const rows = await g.check(
      'select window_start, count() as n from tumble(table(clicks), 10s) group by window_start order by window_start',
      `SELECT window_start, count() AS n FROM (SELECT ${STAR}, CAST(toStartOfInterval(_tp_time, INTERVAL 10 SECOND), toTypeName(_tp_time)) AS window_start, window_start + INTERVAL 10 SECOND AS window_end FROM \`default\`.\`clicks\`) AS clicks GROUP BY window_start ORDER BY window_start`,
    );
    assert.deepEqual(rows, [
      ['2020-02-02 20:00:00.000', 3],
      ['2020-02-02 20:00:10.000', 2],
    ]);
  });

  test('sub-second windows and a time zone argument', async () => {
    const rows = await g.check(
      "select count(distinct window_start) as n from tumble(clicks, ts, 500ms, 'Asia/Shanghai')",
      `SELECT count(DISTINCT window_start) AS n FROM (SELECT ${STAR}, CAST(toStartOfInterval(ts, INTERVAL 500 MILLISECOND, 'Asia/Shanghai'), toTypeName(ts)) AS window_start, window_start + INTERVAL 500 MILLISECOND AS window_end FROM \`default\`.\`clicks\`) AS clicks`,
    );
    assert.deepEqual(rows, [[5]]);
  });

  test('a window over a subquery and over a CTE; the time column may be an expression', async () => {
    const rows = await g.check(
      "with t as (select id, to_datetime64(json_extract_string(raw, 'x'), 3, 'UTC') as et from table(clicks)) select count() as n from tumble(t, et, 1d) as w",
      "WITH t AS (SELECT id, toDateTime64(JSONExtractString(raw, 'x'), 3, 'UTC') AS et FROM `default`.`clicks` AS clicks) SELECT count() AS n FROM (SELECT *, CAST(toStartOfInterval(et, INTERVAL 1 DAY), toTypeName(et)) AS window_start, window_start + INTERVAL 1 DAY AS window_end FROM t) AS w",
    );
    assert.deepEqual(rows, [[5]]);
    const sub = await g.check(
      'select max(window_end) as e from tumble((select ts from table(clicks)), ts, 1m)',
      'SELECT max(window_end) AS e FROM (SELECT *, CAST(toStartOfInterval(ts, INTERVAL 1 MINUTE), toTypeName(ts)) AS window_start, window_start + INTERVAL 1 MINUTE AS window_end FROM (SELECT ts FROM `default`.`clicks` AS clicks))',
    );
    assert.deepEqual(sub, [['2020-02-02 20:01:00.000']]);
  });

  test('joining a window with table()', async () => {
    const rows = await g.check(
      'select b.type, count() as n from tumble(clicks, ts, 5s) as a join table(devices) as b on a.id = b.id group by b.type, window_start order by b.type',
      `SELECT b.type, count() AS n FROM (SELECT ${STAR}, CAST(toStartOfInterval(ts, INTERVAL 5 SECOND), toTypeName(ts)) AS window_start, window_start + INTERVAL 5 SECOND AS window_end FROM \`default\`.\`clicks\`) AS a INNER JOIN \`default\`.\`devices\` AS b ON a.id = b.id GROUP BY b.type, window_start ORDER BY b.type`,
    );
    assert.deepEqual(rows, [
      ['field', 1],
      ['roof', 1],
      ['roof', 1],
      ['wall', 1],
    ]);
  });
});

describe('hop', () => {
  test('hop(s, ts, slide, size) puts each row in size/slide windows aligned to the slide', async () => {
    const sql =
      `SELECT window_start, window_end, count() AS n FROM (SELECT *, window_start + INTERVAL 30 SECOND AS window_end FROM (SELECT ${STAR}, ` +
      'arrayJoin(arrayFilter(__w -> __w + INTERVAL 30 SECOND > ts, arrayMap(__i -> CAST(toStartOfInterval(ts, INTERVAL 10 SECOND), toTypeName(ts)) - toIntervalSecond(__i * 10), range(3)))) AS window_start ' +
      "FROM `default`.`clicks`)) AS clicks WHERE id = 'dev1' GROUP BY window_start, window_end ORDER BY window_start";
    const rows = await g.check(
      "select window_start, window_end, count() as n from hop(clicks, ts, 10s, 30s) where id = 'dev1' group by window_start, window_end order by window_start",
      sql,
    );
    // dev1 at 20:00:00 and 20:00:12 (the notes' example: an event at 10:00:00 is in [09:59:40,10:00:10), [09:59:50,10:00:20), [10:00:00,10:00:30)).
    assert.deepEqual(rows, [
      ['2020-02-02 19:59:40.000', '2020-02-02 20:00:10.000', 1],
      ['2020-02-02 19:59:50.000', '2020-02-02 20:00:20.000', 2],
      ['2020-02-02 20:00:00.000', '2020-02-02 20:00:30.000', 2],
      ['2020-02-02 20:00:10.000', '2020-02-02 20:00:40.000', 1],
    ]);
  });

  test('hop needs literal intervals of one unit, slide not larger than size', () => {
    assert.throws(
      () => translate('select * from hop(clicks, ts, 1s, 1m)', { resolver }),
      /same interval unit/,
    );
    assert.throws(
      () => translate('select * from hop(clicks, ts, 10s, 5s)', { resolver }),
      /slide must not be larger/,
    );
  });
});

describe('dedup, session, changelog', () => {
  test('dedup(s, key) keeps one row per key', async () => {
    const rows = await g.check(
      'select count() as n from dedup(table(clicks), id, 10s)',
      `SELECT count() AS n FROM (SELECT ${STAR} FROM \`default\`.\`clicks\` LIMIT 1 BY id) AS clicks`,
    );
    assert.deepEqual(rows, [[4]]);
  });

  test('session() is streaming-only and changelog() not supported yet: NOT_IMPLEMENTED (48) with a clear message', () => {
    assert.throws(
      () =>
        translate('select count() from session(clicks, ts, 2s) partition by id group by window_start', {
          resolver,
        }),
      (e: Error & { code?: number }) =>
        e.code === 48 && /session\(\) windows are only supported in streaming queries/.test(e.message),
    );
    assert.throws(
      () => translate('select * from changelog(clicks, id)', { resolver }),
      /changelog\(\) \(the changelog of a stream by key\) is not supported yet/,
    );
  });
});
