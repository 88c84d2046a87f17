/**
 * Streaming results answer `bool` where historical ones do (src/sql/translator/bool-results.ts,
 * one rule for both): a select item that is a condition has type `bool` in `result.header` and JSON
 * true/false in the rows, in tails, global and window aggregations, joins and nested queries; a
 * condition nested in another expression keeps the engine's type.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi, type StreamingQuery, sorted } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
  await api.exec(
    "CREATE STREAM bool_s (id string, v int32, ts datetime64(3, 'UTC')) SETTINGS event_time_column='ts'",
  );
  await api.exec("CREATE STREAM bool_r (rid string, w int32, tts datetime64(3, 'UTC'))");
});
after(async () => {
  await api.close();
});

const T = '2024-01-24 10:00';

const types = (q: StreamingQuery) => q.info.result.header.map((c) => c.type);

test('tail: conditions answer bool in the header and true/false in the rows', async () => {
  const q = await api.start(
    "SELECT id, v > 1 AS big, v = 2 OR id LIKE 'c%', NOT (v < 0), v IN (1, 5), starts_with(id, 'a'), [v > 1] AS arr, to_nullable(v) = NULL AS n FROM bool_s",
  );
  assert.deepEqual(types(q), [
    'string',
    'bool',
    'bool',
    'bool',
    'bool',
    'bool',
    'array(uint8)',
    'nullable(bool)',
  ]);
  assert.equal(q.header[2], "or(equals(v, 2), like(id, 'c%'))");
  await api.exec(
    `INSERT INTO bool_s (id, v, ts) VALUES ('a', 1, '${T}:01'), ('b', 2, '${T}:02'), ('c', 5, '${T}:03')`,
  );
  await q.waitForRows(3);
  assert.deepEqual(q.rows, [
    ['a', false, false, true, true, true, [0], null],
    ['b', true, true, true, false, false, [1], null],
    ['c', true, true, true, true, false, [1], null],
  ]);
  await q.cancel();
});

test('global aggregation: a condition over aggregates and a condition as group key answer bool', async () => {
  const q = await api.start(
    'SELECT v > 2 AS big, count() AS c, count() >= 2 AS many, sum(v > 2) AS s FROM bool_s GROUP BY big EMIT PERIODIC 200ms',
  );
  assert.deepEqual(types(q), ['bool', 'uint64', 'bool', 'uint64']);
  await api.exec(
    `INSERT INTO bool_s (id, v, ts) VALUES ('a', 1, '${T}:01'), ('b', 3, '${T}:02'), ('c', 5, '${T}:03')`,
  );
  const rows = await waitForGroups(q, 2);
  assert.deepEqual(sorted(rows), [
    [false, 1, false, 0],
    [true, 2, true, 2],
  ]);
  await q.cancel();
});

test('window aggregation: a condition in the select list answers bool', async () => {
  const q = await api.start(
    'SELECT window_start, count() AS c, max(v) > 3 AS high FROM tumble(bool_s, ts, 10s) GROUP BY window_start',
  );
  assert.deepEqual(types(q), ["datetime64(3, 'UTC')", 'uint64', 'bool']);
  await api.exec(
    `INSERT INTO bool_s (id, v, ts) VALUES ('a', 1, '${T}:01'), ('b', 2, '${T}:02'), ('c', 9, '${T}:11'), ('d', 1, '${T}:25')`,
  );
  await q.waitForRows(2);
  assert.deepEqual(q.rows, [
    [`${T}:00.000`, 2, false],
    [`${T}:10.000`, 1, true],
  ]);
  await q.cancel();
});

test('join of streams and a nested query: conditions answer bool', async () => {
  const j = await api.start(
    'SELECT id, rid, v < w AS smaller FROM bool_s INNER JOIN bool_r ON id = rid AND date_diff_within(10s, ts, tts)',
  );
  assert.deepEqual(types(j), ['string', 'string', 'bool']);
  const n = await api.start(
    'SELECT id, big, NOT big AS small FROM (SELECT id, v > 2 AS big FROM bool_s) WHERE big',
  );
  assert.deepEqual(types(n), ['string', 'bool', 'bool']);
  await api.exec(`INSERT INTO bool_r (rid, w, tts) VALUES ('x', 4, '${T}:01')`);
  await api.exec(`INSERT INTO bool_s (id, v, ts) VALUES ('x', 3, '${T}:02'), ('y', 1, '${T}:02')`);
  await j.waitForRows(1);
  await n.waitForRows(1);
  assert.deepEqual(j.rows, [['x', 'x', true]]);
  assert.deepEqual(n.rows, [['x', true, false]]);
  await j.cancel();
  await n.cancel();
});

test('materialized views: a condition fills a bool target column, and a uint8 or string one as Proton does', async () => {
  await api.exec('CREATE STREAM bool_mv_s (v int)');
  await api.exec('CREATE STREAM bool_mv_t (v int, big uint8, b bool, s string)');
  await api.exec(
    'CREATE MATERIALIZED VIEW bool_mv INTO bool_mv_t AS SELECT v, v > 1 AS big, v > 2 AS b, v > 2 AS s FROM bool_mv_s',
  );
  await api.exec('CREATE MATERIALIZED VIEW bool_mv2 AS SELECT v, v > 1 AS big FROM bool_mv_s');
  await api.exec('INSERT INTO bool_mv_s (v) VALUES (1), (3)');
  const read = async (sql: string, n: number) => {
    for (let attempt = 0; ; attempt++) {
      const q = await api.start(sql);
      await q.waitForEnd();
      if (q.rows.length >= n || attempt === 300) return q;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const t = await read('SELECT v, big, b, s FROM table(bool_mv_t) ORDER BY v', 2);
  assert.deepEqual(t.rows, [
    [1, 0, false, 'false'],
    [3, 1, true, 'true'],
  ]);
  const implicit = await read('SELECT v, big FROM table(bool_mv2) ORDER BY v', 2);
  assert.deepEqual(types(implicit), ['int32', 'bool']);
  assert.deepEqual(implicit.rows, [
    [1, false],
    [3, true],
  ]);
});

/** Rows of the latest emit once it holds `n` groups (a global aggregation re-emits every group). */
async function waitForGroups(q: StreamingQuery, n: number): Promise<unknown[][]> {
  for (;;) {
    const last = q.batches.at(-1);
    if (last && last.length >= n) return last;
    await q.waitForRows(q.rows.length + 1);
  }
}
