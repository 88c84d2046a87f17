/**
 * `_tp_delta` of versioned_kv streams read without aggregation, changelogs written by materialized
 * views, and `lag()` through CTEs (0013_changelog_stream3, 4, 7, 8). Expected rows are computed by
 * hand from the inserts of each case.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

const VK_COLUMNS = "(i float32, k1 int32, k2 string) PRIMARY KEY k2 SETTINGS mode='versioned_kv'";

test('versioned_kv: _tp_delta reads 1 in a tail, through a view and in table(); * does not show it', async () => {
  const vk = await api.createStream('vkd', VK_COLUMNS);
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (1, 2, 'a')`);
  // A view naming _tp_delta is valid (0013_changelog_stream7 id 43, stream8 id 48).
  await api.exec(`CREATE VIEW ${vk}_v AS (SELECT i, k1, k2, _tp_delta FROM ${vk})`);
  const h = await api.historical(`SELECT i, k2, _tp_delta FROM table(${vk})`);
  assert.deepEqual(h.rows, [[1, 'a', 1]]);
  // `*` of table(vk) lists the stream's columns in their declared order, without _tp_delta.
  const star = await api.historical(`SELECT * FROM table(${vk})`);
  assert.deepEqual(
    star.header.map((c) => c.name),
    ['i', 'k1', 'k2', '_tp_time'],
  );
  const tail = await api.start(`SELECT i, k2, _tp_delta FROM ${vk}`);
  const viewed = await api.start(`SELECT i, k2, _tp_delta FROM ${vk}_v`);
  // The tail sends the stored latest row per key first.
  await tail.waitForRows(1);
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (8, 2, 'a')`);
  assert.deepEqual(await tail.settle(2), [
    [1, 'a', 1],
    [8, 'a', 1],
  ]);
  assert.deepEqual((await viewed.settle(1)).at(-1), [8, 'a', 1]);
  await tail.cancel();
  await viewed.cancel();
});

test('EMIT CHANGELOG tail over versioned_kv through a subquery: the state, then -1 old / +1 new per key', async () => {
  const vk = await api.createStream('vkc', VK_COLUMNS);
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (1, 2, 'a'), (2, 0, 'z')`);
  const q = await api.start(
    `SELECT i, k1, k2, _tp_delta FROM (SELECT i, k1, k2 FROM ${vk} WHERE k1 <> 0) WHERE k2 <> 'd' EMIT CHANGELOG`,
  );
  // The stored state first: key a (key z is filtered out by k1 <> 0).
  assert.deepEqual(await q.settle(1), [[1, 2, 'a', 1]]);
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (3, 3, 'b')`);
  await q.waitForRows(2);
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (8, 2, 'a')`);
  assert.deepEqual(await q.settle(4), [
    [1, 2, 'a', 1],
    [3, 3, 'b', 1],
    [1, 2, 'a', -1],
    [8, 2, 'a', 1],
  ]);
  await q.cancel();
});

test('an aggregation over a view over a view naming _tp_delta of versioned_kv retracts (0013_changelog_stream8 id 48)', async () => {
  const vk = await api.createStream('vka', VK_COLUMNS);
  await api.exec(`CREATE VIEW ${vk}_v1 AS (SELECT i, k1, k2, _tp_delta FROM ${vk})`);
  await api.exec(`CREATE VIEW ${vk}_v2 AS (SELECT * FROM ${vk}_v1)`);
  const q = await api.start(`SELECT max(i), min(i), avg(i) FROM ${vk}_v2 EMIT PERIODIC 200ms`);
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (1, 2, 'a'), (3, 3, 'b')`);
  await q.waitForRows(1);
  // a: 1 -> 8; live rows {8, 3}.
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (8, 2, 'a')`);
  assert.deepEqual(await q.settle(2), [
    [3, 1, 2],
    [8, 3, 5.5],
  ]);
  await q.cancel();
});

test('lag() through a CTE, a nested CTE and a view over a CTE (0013_changelog_stream7 ids 41, 44)', async () => {
  const vk = await api.createStream('vkl', VK_COLUMNS);
  await api.exec(`CREATE VIEW ${vk}_v AS (WITH cte AS (SELECT i, k1, k2 FROM ${vk}) SELECT * FROM cte)`);
  const viewed = await api.start(`SELECT i, k2, lag(i, 2), upper(k2) FROM ${vk}_v`);
  const nested = await api.start(
    `WITH c1 AS (WITH c2 AS (SELECT i, k1, k2, _tp_delta FROM ${vk}) SELECT * FROM c2) SELECT i, k2, lag(i, 2), upper(k2) FROM c1`,
  );
  const expected = [
    [1, 'a', 0, 'A'],
    [3, 'b', 0, 'B'],
    [5, 'c', 1, 'C'],
    [8, 'a', 3, 'A'],
  ];
  // One insert per row: lag() crosses steps through its carried values.
  for (const [n, [i, k2]] of expected.entries()) {
    await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (${i}, 1, '${k2}')`);
    await viewed.waitForRows(n + 1);
    await nested.waitForRows(n + 1);
  }
  assert.deepEqual(await viewed.settle(4), expected);
  assert.deepEqual(await nested.settle(4), expected);
  await viewed.cancel();
  await nested.cancel();
});

test('a materialized view selecting _tp_delta stores it in its target: tails see the signs, aggregations the rows (0013_changelog_stream4 ids 1, 4, 10)', async () => {
  const s = await api.createStream('clmv', '(i int32, k1 int32, k2 string)');
  await api.exec(
    `CREATE MATERIALIZED VIEW ${s}_mv AS (WITH cte AS (SELECT i, k1, k2, _tp_delta FROM changelog(${s}, k2)) SELECT i, k1, k2, _tp_delta FROM cte)`,
  );
  // As Proton's inner stream: an append stream with an int8 _tp_delta column.
  const described = await api.get(`/v1beta2/streams/${s}_mv`);
  assert.equal(described.status, 200);
  const target = (await described.json()) as { mode: string; columns: { name: string; type: string }[] };
  assert.equal(target.mode, 'append');
  assert.equal(target.columns.find((c) => c.name === '_tp_delta')?.type, 'int8');
  const q = await api.start(`SELECT i, k1, k2, _tp_delta FROM (SELECT * FROM ${s}_mv)`);
  // The rows as written count once each: the view's -1 rows are rows of an append stream.
  const counted = await api.start(
    `SELECT k2, count(), sum(_tp_delta) FROM ${s}_mv GROUP BY k2 EMIT ON UPDATE`,
  );
  await api.exec(`INSERT INTO ${s} (i, k1, k2) VALUES (4, 3, 'a')`);
  await q.waitForRows(1);
  await counted.waitForRows(1);
  await api.exec(`INSERT INTO ${s} (i, k1, k2) VALUES (2, 3, 'a')`);
  await q.waitForRows(3);
  await counted.waitForRows(2);
  await api.exec(`INSERT INTO ${s} (i, k1, k2) VALUES (2, 5, 'b')`);
  assert.deepEqual(await q.settle(4), [
    [4, 3, 'a', 1],
    [4, 3, 'a', -1],
    [2, 3, 'a', 1],
    [2, 5, 'b', 1],
  ]);
  assert.deepEqual(await counted.settle(3), [
    ['a', 1, 1],
    ['a', 3, 1],
    ['b', 1, 1],
  ]);
  await q.cancel();
  await counted.cancel();
});
