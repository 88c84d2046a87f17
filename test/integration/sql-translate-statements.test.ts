/**
 * Golden translator tests for statements other than SELECT, and the analyzer's engine hook.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { analyze, fillResultTypes } from '../../src/sql/analyzer/analyze.ts';
import type { CreateStream } from '../../src/sql/ast/statement.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';
import {
  translate,
  translateCreateStreamAsTable,
  translateType,
} from '../../src/sql/translator/translate.ts';
import { type GoldenEngine, openGoldenEngine, resolver } from '../helpers/sql-engine.ts';

let g: GoldenEngine;
before(async () => {
  g = await openGoldenEngine();
});
after(async () => {
  await g.close();
});

describe('INSERT', () => {
  test('VALUES rows (with or without commas), functions in values', async () => {
    await g.check(
      "insert into sink (id, n) values ('a', 1)('b', to_uint64('2')), ('c', 3)",
      "INSERT INTO `default`.`sink` (id, n) VALUES ('a', 1), ('b', toUInt64('2')), ('c', 3)",
    );
    assert.deepEqual(await g.rows('SELECT id, n FROM sink ORDER BY id'), [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
  });

  test('INSERT .. SELECT with streaming settings dropped', async () => {
    await g.check(
      "insert into sink (id, n) select id, count() from table(clicks) group by id settings seek_to = 'earliest'",
      'INSERT INTO `default`.`sink` (id, n) SELECT id, count() FROM `default`.`clicks` AS clicks GROUP BY id',
    );
    assert.deepEqual(await g.rows("SELECT sum(n) FROM sink WHERE id LIKE 'dev%'"), [[5]]);
  });

  test('INSERT into a stream whose history is a subquery goes to its insert target', async () => {
    await g.check(
      "insert into kv (k, v, _tp_time) values ('c', 9, '2024-01-02 00:00:00')",
      "INSERT INTO `default`.`kv` (k, v, _tp_time) VALUES ('c', 9, '2024-01-02 00:00:00')",
    );
    assert.deepEqual(await g.rows("SELECT v FROM kv WHERE k = 'c'"), [[9]]);
  });

  test('INSERT with * EXCEPT columns', async () => {
    await g.check(
      "insert into devices (* except floor) values ('dev7', 'door')",
      "INSERT INTO `default`.`devices` (* EXCEPT (floor)) VALUES ('dev7', 'door')",
    );
    assert.deepEqual(await g.rows("SELECT type, floor FROM devices WHERE id = 'dev7'"), [['door', 0]]);
  });
});

describe('DESCRIBE and DDL helpers', () => {
  test('DESCRIBE a stream, a window, a query', async () => {
    const rows = await g.check(
      'describe clicks',
      `DESCRIBE (SELECT * FROM \`default\`.\`clicks\` AS clicks)`,
    );
    // DESCRIBE of a stream lists every stored column (hidden ones only disappear from `SELECT *` lists).
    assert.ok(rows.some((r) => r[0] === 'ts'));
    const q = await g.check('describe (select to_string(1) as s)', 'DESCRIBE (SELECT toString(1) AS s)');
    assert.deepEqual(q[0]?.slice(0, 2), ['s', 'String']);
  });

  test('CREATE STREAM as a plain engine table maps every type', async () => {
    const s = parseStatement(
      "create stream if not exists plain (a int, b low_cardinality(string) default 'x', c nullable(float64), d datetime64(3, 'UTC') codec(DoubleDelta, LZ4), e map(string, array(uint8)), f bool, g uuid, h ipv4) order by a settings mode = 'append'",
    ) as CreateStream;
    const sql = translateCreateStreamAsTable(s);
    assert.equal(
      sql,
      "CREATE TABLE IF NOT EXISTS plain (a Int32, b LowCardinality(String) DEFAULT 'x', c Nullable(Float64), d DateTime64(3, 'UTC') CODEC(DoubleDelta, LZ4), e Map(String, Array(UInt8)), f Bool, g UUID, h IPv4) ENGINE = MergeTree ORDER BY a",
    );
    await g.engine.query(sql);
    const types = await g.rows("SELECT type FROM system.columns WHERE table = 'plain' ORDER BY position");
    assert.deepEqual(types.flat(), [
      'Int32',
      'LowCardinality(String)',
      'Nullable(Float64)',
      "DateTime64(3, 'UTC')",
      'Map(String, Array(UInt8))',
      'Bool',
      'UUID',
      'IPv4',
    ]);
    assert.equal(translateType('nullable(datetime64(3))'), 'Nullable(DateTime64(3))');
  });

  test('statements Tributary carries out itself are not translated', () => {
    assert.throws(
      () => translate('create stream s (a int)', { resolver }),
      /CREATE STREAM is carried out by Tributary itself/,
    );
    assert.throws(
      () => translate('drop view v', { resolver }),
      /DROP VIEW is carried out by Tributary itself/,
    );
  });
});

describe('analysis with engine types', () => {
  test('rewritten_query runs on the engine and its header fills the computed column types', async () => {
    const a = analyze(
      'select id, count() as n, max(value) + 1 from tumble(clicks, ts, 5s) group by id, window_start',
      resolver,
    );
    assert.equal(a.is_streaming, true);
    assert.equal(a.has_aggr, true);
    assert.deepEqual(a.group_by_columns, ['id', 'window_start']);
    const header = await g.header(a.rewritten_query);
    assert.deepEqual(
      header.map((h) => h.name),
      ['id', 'n', 'plus(max(value), 1)'],
    );
    const filled = fillResultTypes(a, header);
    assert.deepEqual(
      filled.result_columns.map((c) => [c.column, c.column_type, c.table]),
      [
        ['id', 'string', 'clicks'],
        ['n', 'uint64', ''],
        ['plus(max(value), 1)', 'float64', ''],
      ],
    );
  });
});
