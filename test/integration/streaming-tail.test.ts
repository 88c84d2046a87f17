/**
 * Streaming tail queries (no aggregation) through the REST API: filters and projections per row,
 * start at "latest", now() per row, LIMIT ending the query, cancel and disconnect.
 * Semantics: streaming-sql-notes.md §1.3, §1.6 (tail mode), §1.10 (LIMIT), §1.11 (now()).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
  await api.exec(
    "CREATE STREAM tail_s (id string, v int32, ts datetime64(3, 'UTC')) SETTINGS event_time_column='ts'",
  );
});
after(async () => {
  await api.close();
});

const T = '2024-01-24 10:00';

test('tail: filter and projection per row, in ingest order, starting at the latest row', async () => {
  // Rows already in the stream are not replayed: a streaming SELECT starts at "latest" (§1.3).
  await api.exec(`INSERT INTO tail_s (id, v, ts) VALUES ('old', 3, '${T}:00')`);
  const q = await api.start(
    "SELECT id, v * 10 AS v10, concat(id, '-', to_string(v)) AS tag, ts FROM tail_s WHERE v % 2 = 1",
  );
  assert.deepEqual(q.header, ['id', 'v10', 'tag', 'ts']);
  // Batch 1 (SQL INSERT): v=1 passes, v=2 is filtered out, v=5 passes.
  await api.exec(
    `INSERT INTO tail_s (id, v, ts) VALUES ('a', 1, '${T}:01'), ('b', 2, '${T}:02'), ('c', 5, '${T}:03')`,
  );
  await q.waitForRows(2);
  // Batch 2 (compact ingest), event times out of order: a tail does not care about event time.
  await api.ingest(
    'tail_s',
    ['id', 'v', 'ts'],
    [
      ['d', 7, `${T}:00.500`],
      ['e', 8, `${T}:09`],
      ['f', 9, `${T}:04`],
    ],
  );
  await q.waitForRows(4);
  // v % 2 = 1 keeps a(1), c(5), d(7), f(9); v10 = v * 10; 'old' (before the query) never shows.
  assert.deepEqual(q.rows, [
    ['a', 10, 'a-1', `${T}:01.000`],
    ['c', 50, 'c-5', `${T}:03.000`],
    ['d', 70, 'd-7', `${T}:00.500`],
    ['f', 90, 'f-9', `${T}:04.000`],
  ]);
  const rows = await q.waitForQuiet(300);
  assert.equal(rows.length, 4, 'no other row arrives');
  assert.equal((await q.cancel()).status, 'canceled');
});

test('tail: now() is evaluated per row as it is processed, not once per query', async () => {
  const q = await api.start(
    'SELECT id, to_unix_timestamp(now()) AS n, now64(3) > ts AS after_event FROM tail_s',
  );
  const startedSec = Math.floor(Date.now() / 1000) - 1;
  await api.exec(`INSERT INTO tail_s (id, v, ts) VALUES ('n1', 1, '${T}:00')`);
  await q.waitForRows(1);
  // Wait more than a second before the next batch: its now() must be at least one second later.
  await new Promise((r) => setTimeout(r, 1100));
  await api.exec(`INSERT INTO tail_s (id, v, ts) VALUES ('n2', 1, '${T}:00')`);
  await q.waitForRows(2);
  const received = Math.floor(Date.now() / 1000);
  const [r1, r2] = q.rows as [[string, number, number], [string, number, number]];
  assert.equal(r1[0], 'n1');
  assert.equal(r2[0], 'n2');
  assert.ok(r1[1] >= startedSec && r2[1] <= received, `now() is wall-clock time: ${JSON.stringify(q.rows)}`);
  assert.ok(r2[1] >= r1[1] + 1, `the second batch saw a later now(): ${JSON.stringify(q.rows)}`);
  // now64(3) is today, event times are in 2024: the comparison is true for both rows.
  assert.ok(
    q.rows.every((r) => r[2] === true || r[2] === 1),
    JSON.stringify(q.rows),
  );
  await q.cancel();
});

test('tail: LIMIT n ends the query once n rows have been emitted (final status finished)', async () => {
  const q = await api.start("SELECT id FROM tail_s WHERE id LIKE 'L%' LIMIT 3");
  await api.exec(
    `INSERT INTO tail_s (id, v, ts) VALUES ('L1', 1, '${T}:00'), ('x', 1, '${T}:00'), ('L2', 1, '${T}:00')`,
  );
  await q.waitForRows(2);
  assert.equal(q.final, undefined, 'still running after 2 of 3 rows');
  // The third and fourth matching rows arrive in one batch: only the third is sent, then the end.
  await api.exec(`INSERT INTO tail_s (id, v, ts) VALUES ('L3', 1, '${T}:00'), ('L4', 1, '${T}:00')`);
  const final = await q.waitForEnd();
  assert.equal(final.status, 'finished');
  assert.deepEqual(q.rows, [['L1'], ['L2'], ['L3']]);
  assert.equal(await q.status(), 'finished');
});

test('tail: LIMIT larger than one batch spans batches; a batch past the limit is cut', async () => {
  const q = await api.start("SELECT v FROM tail_s WHERE id = 'M' LIMIT 4");
  await api.exec(
    `INSERT INTO tail_s (id, v, ts) VALUES ('M', 1, '${T}:00'), ('M', 2, '${T}:00'), ('M', 3, '${T}:00')`,
  );
  await q.waitForRows(3);
  await api.exec(
    `INSERT INTO tail_s (id, v, ts) VALUES ('M', 4, '${T}:00'), ('M', 5, '${T}:00'), ('M', 6, '${T}:00')`,
  );
  assert.equal((await q.waitForEnd()).status, 'finished');
  assert.deepEqual(q.rows, [[1], [2], [3], [4]]);
});

test('cancel: POST /queries/{id}/cancel ends a streaming query with status canceled', async () => {
  const q = await api.start("SELECT id FROM tail_s WHERE id = 'c1' OR id = 'c2'");
  await api.exec(`INSERT INTO tail_s (id, v, ts) VALUES ('c1', 1, '${T}:00')`);
  await q.waitForRows(1);
  const final = await q.cancel();
  assert.equal(final.status, 'canceled');
  assert.equal(await q.status(), 'canceled');
  // Nothing more arrives after the end: the event stream is closed.
  await api.exec(`INSERT INTO tail_s (id, v, ts) VALUES ('c2', 1, '${T}:00')`);
  await q.ended;
  assert.deepEqual(q.rows, [['c1']]);
  // Cancel again: a no-op (204).
  const again = await api.post(`/v1beta2/queries/${q.id}/cancel`, {});
  assert.equal(again.status, 204);
  assert.equal(await q.status(), 'canceled');
});

test('disconnect: a client that goes away cancels its streaming query', async () => {
  const q = await api.start('SELECT id FROM tail_s');
  q.disconnect();
  let status = await q.status();
  const deadline = Date.now() + 15_000;
  while (status !== 'canceled' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    status = await q.status();
  }
  assert.equal(status, 'canceled');
});

test('tail: EMIT CHANGELOG adds _tp_delta = +1 to each appended row', async () => {
  // §1.6: tail mode accepts EMIT CHANGELOG, which adds a `_tp_delta` output column; over an append
  // stream every row is an insert (+1). (Whether `_tp_delta` may also be named in the select list
  // of an append-stream tail, the notes do not say; not tested.)
  const q = await api.start("SELECT id, v FROM tail_s WHERE id LIKE 'cl%' EMIT CHANGELOG");
  assert.deepEqual(q.header, ['id', 'v', '_tp_delta']);
  await api.exec(`INSERT INTO tail_s (id, v, ts) VALUES ('cl1', 1, '${T}:00'), ('cl2', 2, '${T}:00')`);
  await q.waitForRows(2);
  assert.deepEqual(q.rows, [
    ['cl1', 1, 1],
    ['cl2', 2, 1],
  ]);
  await q.cancel();
});

test('tail: watermark and periodic emit policies are refused for a non-aggregating query', async () => {
  // §1.6: "Streaming tail mode doesn't support any watermark or periodic emit" (INCORRECT_QUERY, 80).
  for (const emit of ['EMIT PERIODIC 1s', 'EMIT AFTER WATERMARK', 'EMIT ON UPDATE']) {
    const e = await api.startError(`SELECT id FROM tail_s ${emit}`);
    assert.equal(e.code, 80, `${emit}: ${JSON.stringify(e)}`);
  }
});

test('tail: lag() reads the previous row, the type default for the first (§1.11)', async () => {
  await api.exec('CREATE STREAM tail_lag (i int32)');
  const q = await api.start('SELECT i, lag(i) AS prev FROM tail_lag');
  await api.exec('INSERT INTO tail_lag (i) VALUES (1), (2)');
  await q.waitForRows(2);
  await api.exec('INSERT INTO tail_lag (i) VALUES (3)');
  await q.waitForRows(3);
  // 0018_query_state1_func id 40: lag(value) over 1, 2, 3 -> 0, 1, 2, across batches.
  assert.deepEqual(q.rows, [
    [1, 0],
    [2, 1],
    [3, 2],
  ]);
  await q.cancel();
});

test('tail: lag() with PARTITION BY reads the previous row of the same substream, across batches', async () => {
  await api.exec('CREATE STREAM tail_lag_sub (val float32, k int32)');
  const q = await api.start(
    'SELECT lag(val, 1) AS prev, lags(val, 1, 2, -1) AS two, k FROM tail_lag_sub PARTITION BY k',
  );
  // 0012_multishards2 id 18: one row per insert, keys alternating; then a batch with both keys.
  for (const [v, k] of [
    [6, 1],
    [1, 2],
    [2, 1],
    [3, 2],
  ])
    await api.exec(`INSERT INTO tail_lag_sub (val, k) VALUES (${v}, ${k})`);
  await api.exec('INSERT INTO tail_lag_sub (val, k) VALUES (4, 1), (5, 2), (7, 1)');
  await q.waitForRows(7);
  assert.deepEqual(q.rows, [
    [0, [-1, -1], 1],
    [0, [-1, -1], 2],
    [6, [6, -1], 1],
    [1, [1, -1], 2],
    [2, [2, 6], 1],
    [3, [3, 1], 2],
    [4, [4, 2], 1],
  ]);
  await q.cancel();
});

test('tail: lag() over subqueries that filter and project (0012_multishards6 id 57)', async () => {
  await api.exec('CREATE STREAM tail_lag_subq (val float32, f1 int32, f2 int32)');
  const q = await api.start(
    'SELECT lag(val), f1, f2 FROM (SELECT val, f1, f2 FROM (SELECT val, f1, f2 FROM tail_lag_subq WHERE f1 = 1) WHERE f2 = 1 AND val > 0)',
  );
  for (const [v, f1, f2] of [
    [1, 1, 1],
    [2, 1, 1],
    [3, 0, 1],
    [4, 1, 0],
    [5, 1, 1],
  ])
    await api.exec(`INSERT INTO tail_lag_subq (val, f1, f2) VALUES (${v}, ${f1}, ${f2})`);
  await q.waitForRows(3);
  assert.deepEqual(q.rows, [
    [0, 1, 1],
    [1, 1, 1],
    [2, 1, 1],
  ]);
  await q.cancel();
});

test('tail: EMIT LAST 1h backfills the rows of the last hour, then keeps tailing (§1.6)', async () => {
  // Without event_time_column, _tp_time is the insert time: both rows are within the last hour.
  await api.exec('CREATE STREAM tail_last (i int32)');
  await api.exec('INSERT INTO tail_last (i) VALUES (1)');
  await api.exec('INSERT INTO tail_last (i) VALUES (2)');
  const q = await api.start('SELECT i FROM tail_last EMIT LAST 1h');
  await q.waitForRows(2);
  await api.exec('INSERT INTO tail_last (i) VALUES (3)');
  await q.waitForRows(3);
  assert.deepEqual(q.rows, [[1], [2], [3]]);
  await q.cancel();
});
