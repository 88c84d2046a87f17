/**
 * Golden translator tests for SELECT features: the exact ClickHouse SQL, run on the engine.
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

describe('streams and table()', () => {
  test('a stream reads its stored rows; * hides the storage columns', async () => {
    const rows = await g.check(
      "select * from clicks where id = 'dev2'",
      "SELECT * EXCEPT (_tp_sn, _tp_delta) FROM `default`.`clicks` AS clicks WHERE id = 'dev2'",
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.length, 6);
  });

  test('table(s) reads the same rows as s', async () => {
    const rows = await g.check(
      'select count() from table(clicks)',
      'SELECT count() FROM `default`.`clicks` AS clicks',
    );
    assert.deepEqual(rows, [[5]]);
  });

  test('storage columns can still be named', async () => {
    const rows = await g.check(
      'select _tp_sn from table(clicks) where _tp_sn >= 3 order by _tp_sn',
      'SELECT _tp_sn FROM `default`.`clicks` AS clicks WHERE _tp_sn >= 3 ORDER BY _tp_sn',
    );
    assert.deepEqual(rows, [[3], [4]]);
  });

  test('EMIT, PARTITION BY and streaming settings are dropped; engine settings stay', async () => {
    const rows = await g.check(
      "select id, count() from clicks partition by id group by id order by id emit periodic 2s settings seek_to = 'earliest', max_threads = 1",
      'SELECT id, count() FROM `default`.`clicks` AS clicks GROUP BY id ORDER BY id SETTINGS max_threads = 1',
    );
    assert.deepEqual(rows, [
      ['dev1', 2],
      ['dev2', 1],
      ['dev6', 1],
      ['dev8', 1],
    ]);
  });

  test('FORMAT is left to the caller (the engine call takes the output format)', async () => {
    const rows = await g.check('select 1 as x format CSV', 'SELECT 1 AS x');
    assert.deepEqual(rows, [[1]]);
  });

  test('an unknown stream is UNKNOWN_STREAM (60)', () => {
    assert.throws(
      () => translate('select * from nope', { resolver }),
      (e: Error & { code?: number }) => e.code === 60 && /Stream nope doesn't exist/.test(e.message),
    );
  });
});

describe('function names', () => {
  test('snake_case names map to the engine names; computed columns keep Proton names', async () => {
    const sql =
      "select to_string(value), lower_utf8(id), json_extract_int(raw, 'n'), cut_url_parameter(url, 'q') from table(clicks) where id = 'dev1' order by _tp_sn limit 1";
    const expected =
      "SELECT toString(value) AS `to_string(value)`, lowerUTF8(id) AS `lower_utf8(id)`, JSONExtractInt(raw, 'n') AS `json_extract_int(raw, 'n')`, cutURLParameter(url, 'q') AS `cut_url_parameter(url, 'q')` FROM `default`.`clicks` AS clicks WHERE id = 'dev1' ORDER BY _tp_sn LIMIT 1";
    assert.deepEqual(await g.check(sql, expected), [['57.3', 'dev1', 7, 'https://a.example/x?']]);
    assert.deepEqual(
      (await g.header(expected)).map((h) => h.name),
      ['to_string(value)', 'lower_utf8(id)', "json_extract_int(raw, 'n')", "cut_url_parameter(url, 'q')"],
    );
  });

  test('aggregates with combinators, unique*, count_distinct, latest/earliest', async () => {
    const rows = await g.check(
      'select count_if(value > 60), unique_exact(id), count_distinct(id), sum_distinct(floor(value)), latest(id), earliest(id) from (select * from table(clicks) order by _tp_sn)',
      'SELECT countIf(value > 60) AS `count_if(greater(value, 60))`, uniqExact(id) AS `unique_exact(id)`, uniqExact(id) AS `count_distinct(id)`, sumDistinct(floor(value)) AS `sum_distinct(floor(value))`, anyLast(id) AS `latest(id)`, any(id) AS `earliest(id)` FROM (SELECT * EXCEPT (_tp_sn, _tp_delta) FROM `default`.`clicks` AS clicks ORDER BY _tp_sn)',
    );
    assert.deepEqual(rows, [[2, 4, 4, 308, 'dev1', 'dev1']]);
  });

  test('parametric aggregates take trailing parameters: quantile, p90, top_k, min_k, max_k, group_uniq_array', async () => {
    const rows = await g.check(
      'select quantile(value, 0.5), p90(value), top_k(id, 1, false), min_k(value, 2), max_k(value, 2), group_uniq_array(id, 10) from table(clicks)',
      'SELECT quantile(0.5)(value) AS `quantile(value, 0.5)`, quantile(0.9)(value) AS `p90(value)`, topK(1)(id) AS `top_k(id, 1, false)`, groupArraySorted(2)(value) AS `min_k(value, 2)`, arraySlice(arrayReverseSort(groupArray(value)), 1, 2) AS `max_k(value, 2)`, groupUniqArray(10)(id) AS `group_uniq_array(id, 10)` FROM `default`.`clicks` AS clicks',
    );
    const [row] = rows as [unknown[]];
    assert.equal(Math.round(Number(row[0])), 60);
    assert.deepEqual(row[2], ['dev1']);
    assert.deepEqual(row[3], [57.3, 58.3]);
    assert.deepEqual(row[4], [67, 66]);
    assert.equal((row[5] as string[]).length, 4);
  });

  test('top_k with counts (the default): (item, count) pairs, as Proton answers', async () => {
    const rows = await g.check(
      'select top_k(id, 1, true), top_k(id, 1) from table(clicks)',
      "SELECT arrayMap(__t -> tuple(tupleElement(__t, 1), tupleElement(__t, 2)), topK(1, 3, 'counts')(id)) AS `top_k(id, 1, true)`, arrayMap(__t -> tuple(tupleElement(__t, 1), tupleElement(__t, 2)), topK(1, 3, 'counts')(id)) AS `top_k(id, 1)` FROM `default`.`clicks` AS clicks",
    );
    assert.deepEqual(rows, [[[['dev1', 2]], [['dev1', 2]]]]);
  });

  test('map_cast: pairs as map(), two arrays (literals, array functions, their aliases) as mapFromArrays', async () => {
    const rows = await g.check(
      "select map_cast('a', 1, 'b', 2) as p, map_cast(['x', 'y'], [1, 2]) as l, group_array(id) as ids, " +
        "map_cast(ids, group_array(value)) as m, map_cast(id, any(value)) as one from table(clicks) where id = 'dev2' group by id",
      "SELECT map('a', 1, 'b', 2) AS p, mapFromArrays(['x', 'y'], [1, 2]) AS l, groupArray(id) AS ids, mapFromArrays(ids, groupArray(value)) AS m, map(id, any(value)) AS one FROM `default`.`clicks` AS clicks WHERE id = 'dev2' GROUP BY id",
    );
    assert.deepEqual(rows, [[{ a: 1, b: 2 }, { x: 1, y: 2 }, ['dev2'], { dev2: 58.3 }, { dev2: 58.3 }]]);
  });

  test('aggregate FILTER (WHERE ..) becomes the If combinator', async () => {
    const rows = await g.check(
      "select max(value) filter (where id = 'dev1') as m from table(clicks)",
      "SELECT maxIf(value, id = 'dev1') AS m FROM `default`.`clicks` AS clicks",
    );
    assert.deepEqual(rows, [[60]]);
  });

  test('lambdas and higher-order functions', async () => {
    const rows = await g.check(
      'select array_map(x -> x * 2, [1, 2, 3]) as a, array_filter((x, y) -> y > 1, [1, 2], [1, 2]) as b',
      'SELECT arrayMap(x -> x * 2, [1, 2, 3]) AS a, arrayFilter((x, y) -> y > 1, [1, 2], [1, 2]) AS b',
    );
    assert.deepEqual(rows, [[[2, 4, 6], [2]]]);
  });

  test('unknown functions name the function and suggest the nearest Proton name', () => {
    assert.throws(
      () => translate('select to_strng(value) from clicks', { resolver }),
      (e: Error & { code?: number }) =>
        e.code === 46 && e.message === 'Unknown function to_strng. Maybe you meant: to_string',
    );
  });

  test('streaming-only functions are not translated blindly', async () => {
    assert.throws(
      () => translate('select emit_version() from clicks', { resolver }),
      /Function emit_version is only supported in streaming queries/,
    );
    const rows = await g.check(
      'select emit_version() from clicks',
      'SELECT 0 AS `emit_version()` FROM `default`.`clicks` AS clicks',
      {
        streamingFunction: () => '0',
      },
    );
    assert.deepEqual(rows, [[0], [0], [0], [0], [0]]);
  });
});

describe('literals, operators and types', () => {
  test('interval shorthand becomes INTERVAL n UNIT', async () => {
    const rows = await g.check(
      "select to_datetime('2024-01-01 00:00:00', 'UTC') + 90s - 1m, to_datetime('2024-01-31 00:00:00', 'UTC') + 1M as m",
      "SELECT toDateTime('2024-01-01 00:00:00', 'UTC') + INTERVAL 90 SECOND - INTERVAL 1 MINUTE AS `minus(plus(to_datetime('2024-01-01 00:00:00', 'UTC'), 90s), 1m)`, toDateTime('2024-01-31 00:00:00', 'UTC') + INTERVAL 1 MONTH AS m",
    );
    assert.deepEqual(rows, [['2024-01-01 00:00:30', '2024-02-29 00:00:00']]);
  });

  test('::type and CAST(x AS type) map Proton type names', async () => {
    const rows = await g.check(
      "select '42'::int32 as a, cast('x' as low_cardinality(string)) as b, cast(1.5, 'decimal(10, 2)') as c, '2024-01-01 00:00:00'::datetime64(3, 'UTC') as d",
      "SELECT CAST('42' AS Int32) AS a, CAST('x' AS LowCardinality(String)) AS b, CAST(1.5, 'Decimal(10, 2)') AS c, CAST('2024-01-01 00:00:00' AS DateTime64(3, 'UTC')) AS d",
    );
    assert.deepEqual(rows, [[42, 'x', 1.5, '2024-01-01 00:00:00.000']]);
    assert.deepEqual(
      (await g.header("SELECT CAST('x' AS LowCardinality(String)) AS b")).map((h) => h.type),
      ['LowCardinality(String)'],
    );
  });

  test('unknown types are UNKNOWN_TYPE (50) with a suggestion', () => {
    assert.throws(
      () => translate("select '1'::strin", { resolver }),
      (e: Error & { code?: number }) =>
        e.code === 50 && /Unknown data type strin\. Maybe you meant: string/.test(e.message),
    );
  });

  test('JSON access raw:a.b and raw:n::int', async () => {
    const rows = await g.check(
      "select raw:a.b as b, raw:n::int32 as n from table(clicks) where id = 'dev2'",
      "SELECT arrayElement(arrayMap(__json_element -> if(JSONType(__json_element) = 'String', JSONExtractString(__json_element), __json_element), arraySlice(JSONExtractArrayRaw(JSON_QUERY(raw, '$.`a`.`b`')), 1, 1)), 1) AS b, CAST(arrayElement(arrayMap(__json_element -> if(JSONType(__json_element) = 'String', JSONExtractString(__json_element), __json_element), arraySlice(JSONExtractArrayRaw(JSON_QUERY(raw, '$.`n`')), 1, 1)), 1) AS Int32) AS n FROM `default`.`clicks` AS clicks WHERE id = 'dev2'",
    );
    assert.deepEqual(rows, [['2', 8]]);
  });

  test('literals: arrays, tuples, one-element tuples, maps, NULL, booleans, hex, exponents', async () => {
    const rows = await g.check(
      "select [1, 2] as a, (1, 'x') as t, (1,) as t1, {'k': 1} as m, null as n, true as b, 0x10 as h, 1e2 as e",
      "SELECT [1, 2] AS a, (1, 'x') AS t, tuple(1) AS t1, map('k', 1) AS m, NULL AS n, true AS b, 0x10 AS h, 1e2 AS e",
    );
    assert.deepEqual(rows, [[[1, 2], [1, 'x'], [1], { k: 1 }, null, true, 16, 100]]);
  });

  // Operands are parenthesised; a left-deep chain of one operator prints flat, as the engine reads
  // it as one n-ary and()/or() (nested parentheses would cost it parser depth).
  test('operators keep their grouping with explicit parentheses', async () => {
    const rows = await g.check(
      "select count() from table(clicks) where not value > 60 and (id like 'dev%' or id in ('x', 'y')) and value between 50 and 70 and url is not null",
      "SELECT count() FROM `default`.`clicks` AS clicks WHERE (NOT (value > 60)) AND ((id LIKE 'dev%') OR (id IN ('x', 'y'))) AND (value BETWEEN 50 AND 70) AND (url IS NOT NULL)",
    );
    assert.deepEqual(rows, [[3]]);
  });

  test('CASE, ternary, subscripts and tuple elements', async () => {
    const rows = await g.check(
      "select case when value > 60 then 'hi' else 'lo' end as c, value > 60 ? 1 : 0 as t, [10, 20][2] as s, (1, 2).2 as e from table(clicks) where id = 'dev8'",
      "SELECT CASE WHEN value > 60 THEN 'hi' ELSE 'lo' END AS c, (value > 60) ? 1 : 0 AS t, [10, 20][2] AS s, (1, 2).2 AS e FROM `default`.`clicks` AS clicks WHERE id = 'dev8'",
    );
    assert.deepEqual(rows, [['hi', 1, 20, 2]]);
  });
});

describe('query structure', () => {
  test('CTEs, subqueries in FROM and IN', async () => {
    const rows = await g.check(
      "with hot as (select id from table(clicks) where value > 60) select id from table(devices) where id in (select id from hot) or id in (select 'dev9') order by id",
      "WITH hot AS (SELECT id FROM `default`.`clicks` AS clicks WHERE value > 60) SELECT id FROM `default`.`devices` AS devices WHERE (id IN (SELECT id FROM hot)) OR (id IN (SELECT 'dev9')) ORDER BY id",
    );
    assert.deepEqual(rows, [['dev6'], ['dev9']]);
  });

  test('UNION ALL', async () => {
    const rows = await g.check(
      'select 1 as x union all select 2 as x',
      'SELECT 1 AS x UNION ALL SELECT 2 AS x',
    );
    assert.deepEqual(rows.sort(), [[1], [2]]);
  });

  test('a bare UNION is UNION ALL, as in Proton; UNION DISTINCT stays', async () => {
    const rows = await g.check(
      'select 1 as x union select 1 as x union distinct select 2 as x',
      'SELECT 1 AS x UNION ALL SELECT 1 AS x UNION DISTINCT SELECT 2 AS x',
    );
    // (1 UNION ALL 1) UNION DISTINCT 2, left to right as the engine reads it.
    assert.deepEqual(rows.sort(), [[1], [2]]);
    const all = await g.check('select 1 as x union select 1 as x', 'SELECT 1 AS x UNION ALL SELECT 1 AS x');
    assert.deepEqual(all, [[1], [1]]);
  });

  test('joins: a stream with table(); LEFT join; USING', async () => {
    const rows = await g.check(
      'select a.id, b.type, max(a.value) as m from clicks as a join table(devices) as b on a.id = b.id group by a.id, b.type order by a.id',
      'SELECT a.id, b.type, max(a.value) AS m FROM `default`.`clicks` AS a INNER JOIN `default`.`devices` AS b ON a.id = b.id GROUP BY a.id, b.type ORDER BY a.id',
    );
    assert.deepEqual(rows, [
      ['dev1', 'roof', 60],
      ['dev2', 'wall', 58.3],
      ['dev6', 'field', 66],
    ]);
    const left = await g.check(
      'select d.id, sum(c.value) as n from table(devices) as d left join table(clicks) as c using (id) group by d.id order by d.id',
      'SELECT d.id, sum(c.value) AS n FROM `default`.`devices` AS d LEFT JOIN `default`.`clicks` AS c USING (id) GROUP BY d.id ORDER BY d.id',
    );
    assert.deepEqual(
      left.map(([id, n]) => [id, Math.round(Number(n))]),
      [
        ['dev1', 117],
        ['dev2', 58],
        ['dev6', 66],
        ['dev9', 0],
      ],
    );
  });

  test('LATEST JOIN: each left row meets the newest matching right row', async () => {
    const rows = await g.check(
      'select d.id, c.value from table(devices) as d latest join clicks as c on d.id = c.id order by d.id',
      'SELECT d.id, c.value FROM `default`.`devices` AS d INNER JOIN (SELECT * FROM `default`.`clicks` AS c ORDER BY _tp_time DESC LIMIT 1 BY id) AS c ON d.id = c.id ORDER BY d.id',
    );
    assert.deepEqual(rows, [
      ['dev1', 60],
      ['dev2', 58.3],
      ['dev6', 66],
    ]);
    // keys that cannot be told apart: an ANY join (one match per left row)
    assert.equal(
      translate('select s, ss from devices latest join clicks on i = ii', { resolver }),
      'SELECT s, ss FROM `default`.`devices` AS devices INNER ANY JOIN `default`.`clicks` AS clicks ON i = ii',
    );
  });

  test('ASOF JOIN: an equality and an inequality', async () => {
    const rows = await g.check(
      'select c.id, c._tp_sn, d.floor from table(clicks) as c asof join table(devices) as d on c.id = d.id and c._tp_sn >= d.floor order by c._tp_sn',
      'SELECT c.id, c._tp_sn, d.floor FROM `default`.`clicks` AS c INNER ASOF JOIN `default`.`devices` AS d ON (c.id = d.id) AND (c._tp_sn >= d.floor) ORDER BY c._tp_sn',
    );
    assert.deepEqual(rows, [
      ['dev2', 1, 1],
      ['dev6', 2, 0],
      ['dev1', 4, 3],
    ]);
  });

  test('LIMIT n BY and LIMIT/OFFSET', async () => {
    const rows = await g.check(
      'select id, value from table(clicks) order by value desc limit 1 by id limit 2 offset 1',
      'SELECT id, value FROM `default`.`clicks` AS clicks ORDER BY value DESC LIMIT 1 BY id LIMIT 2 OFFSET 1',
    );
    assert.deepEqual(rows, [
      ['dev6', 66],
      ['dev1', 60],
    ]);
  });

  test('GROUP BY WITH ROLLUP and ORDER BY WITH FILL', async () => {
    const rows = await g.check(
      'select floor(value / 10) as b, count() as n from table(clicks) group by b with rollup order by b',
      'SELECT floor(value / 10) AS b, count() AS n FROM `default`.`clicks` AS clicks GROUP BY b WITH ROLLUP ORDER BY b',
    );
    assert.deepEqual(rows, [
      [0, 5],
      [5, 2],
      [6, 3],
    ]);
    const filled = await g.check(
      'select number as n from numbers(3) where n != 1 order by n with fill',
      'SELECT number AS n FROM numbers(3) WHERE n != 1 ORDER BY n WITH FILL',
    );
    assert.deepEqual(filled, [[0], [1], [2]]);
  });

  test('window functions with OVER', async () => {
    const rows = await g.check(
      "select id, sum(value) over (partition by id) as s from table(clicks) where id = 'dev1' order by _tp_sn",
      "SELECT id, sum(value) OVER (PARTITION BY id) AS s FROM `default`.`clicks` AS clicks WHERE id = 'dev1' ORDER BY _tp_sn",
    );
    assert.equal(rows.length, 2);
    assert.equal(Math.round(Number(rows[0]?.[1]) * 10), 1173);
  });

  test('views are expanded inline', async () => {
    const rows = await g.check(
      'select id from roof_devices order by id',
      "SELECT id FROM (SELECT id, floor FROM `default`.`devices` AS devices WHERE type = 'roof') AS roof_devices ORDER BY id",
    );
    assert.deepEqual(rows, [['dev1'], ['dev9']]);
  });

  test('a resolver subquery (latest row per key) stands in for a versioned_kv stream', async () => {
    const rows = await g.check(
      'select k, v from kv order by k',
      'SELECT k, v FROM (SELECT * FROM `default`.`kv` ORDER BY _tp_time DESC LIMIT 1 BY k) AS kv ORDER BY k',
    );
    assert.deepEqual(rows, [
      ['a', 2],
      ['b', 5],
    ]);
  });

  test('other table functions pass through with engine names', async () => {
    const rows = await g.check('select count() from numbers(10)', 'SELECT count() FROM numbers(10)');
    assert.deepEqual(rows, [[10]]);
  });
});

describe('table functions with a structure', () => {
  test("values('x nullable(string), ...'): the structure's types in the engine's names", async () => {
    const rows = await g.check(
      "select x, y from values('x nullable(string), y array(low_cardinality(string))', ('42', ['a']), (NULL, []))",
      "SELECT x, y FROM values('x Nullable(String), y Array(LowCardinality(String))', ('42', ['a']), (NULL, []))",
    );
    assert.deepEqual(rows, [
      ['42', ['a']],
      [null, []],
    ]);
  });

  test('INTERVAL with an expression value', async () => {
    const rows = await g.check(
      "select to_date('2017-03-01') + INTERVAL number - 1 MONTH AS d from numbers(2)",
      "SELECT toDate('2017-03-01') + INTERVAL (number - 1) MONTH AS d FROM numbers(2)",
    );
    assert.deepEqual(rows, [['2017-02-01'], ['2017-03-01']]);
  });
});
