/**
 * `lag()` in an aggregation with HAVING on it (Proton's 0001_view_case id 73): Proton's lag is its
 * own function over the aggregation's rows, the engine's lagInFrame a window function that HAVING
 * may not name (184). The condition is filtered one level up (having-over-lag.ts), in historical
 * queries, views and streaming window aggregations alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

test('historical: HAVING on a lag() alias keeps the rows the condition holds for, LIMIT after it', async () => {
  const s = await api.createStream('hl', '(id string, value float64)');
  await api.exec(`INSERT INTO ${s} (id, value) VALUES ('a', 1), ('a', 3), ('b', 2)`);
  // One group: its lag is the default 0, so 0 < 3 holds and 0 > 3 does not.
  const kept = await api.historical(
    `SELECT id, max(value) AS m, lag(m) AS prev FROM table(${s}) WHERE id = 'a' GROUP BY id HAVING prev < m`,
  );
  assert.deepEqual(kept.rows, [['a', 3, 0]]);
  assert.deepEqual(
    kept.header.map((h) => h.name),
    ['id', 'm', 'prev'],
  );
  const none = await api.historical(
    `SELECT id, max(value) AS m, lag(m) AS prev FROM table(${s}) WHERE id = 'a' GROUP BY id HAVING prev > m`,
  );
  assert.deepEqual(none.rows, []);
  // Two groups with equal maxima (a: 2 of 1, 3 capped at 2; b: 2): whichever the engine answers
  // second has prev = m, so exactly one row is kept, the first, with the default -1.
  const one = await api.historical(
    `SELECT max(least(value, 2)) AS m, lag(m, 1, -1) AS prev FROM table(${s}) GROUP BY id HAVING prev < m LIMIT 5`,
  );
  assert.deepEqual(one.rows, [[2, -1]]);
});

test('a view of a window aggregation with HAVING on lag(), read by a streaming query', async () => {
  const s = await api.createStream('hl', "(id string, value float64, t datetime64(3, 'UTC'))");
  await api.exec(
    `CREATE VIEW ${s}_v AS SELECT id, max(value) AS m, lag(m) AS prev FROM tumble(${s}, t, 5s) GROUP BY id, window_start HAVING prev < m`,
  );
  const q = await api.start(`SELECT m, prev FROM ${s}_v`);
  await q.waitForScanned(0);
  // Window [0, 5) closes with the row at 6 s: groups a and b, both with maximum 2. Whichever the
  // window emits second has prev = 2, not < 2: exactly one row, with prev the default 0.
  await api.exec(
    `INSERT INTO ${s} (id, value, t) VALUES ('a', 2, '2024-01-01 00:00:00'), ('b', 1, '2024-01-01 00:00:01'), ('b', 2, '2024-01-01 00:00:02'), ('c', 9, '2024-01-01 00:00:06')`,
  );
  await q.waitForRows(1);
  assertSameRows(await q.waitForQuiet(500), [[2, 0]]);
  await q.cancel();
});
