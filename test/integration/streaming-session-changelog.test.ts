/**
 * Session windows over joins of changelog inputs (issue 10). Proton assigns every row that reaches
 * the session aggregation to a session by its time (SessionHelper::assignWindow reads no
 * `_tp_delta`), the join's retractions (-1) as well as its additions (+1), and aggregates them with
 * the retracting forms of the aggregates (`__count_retract`, `__sum_retract`, ...). So a session
 * holds the net multiset of its rows; a retraction extends a session as any row does; a session
 * whose rows all cancel out is still emitted, with the aggregates of no rows (count 0).
 * A row older than an earlier row of its substream is late and dropped (streaming-session.test.ts),
 * retractions included: the rows below keep their times non-decreasing.
 * Expected rows are computed by hand.
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

const at = (s: number) => `'2024-01-01 00:00:${String(s).padStart(2, '0')}'`;
const ts = (s: number) => `2024-01-01 00:00:${String(s).padStart(2, '0')}.000`;

const sides = async () => {
  const l = await api.createStream(
    'sl',
    "(i int32, k string, t datetime64(3)) PRIMARY KEY i SETTINGS mode='versioned_kv'",
  );
  const r = await api.createStream('sr', "(j int32, kk string) PRIMARY KEY j SETTINGS mode='versioned_kv'");
  return { l, r };
};

/** The inserts both forms of the query see, and the rows they answer. */
async function run(sql: string, l: string, r: string): Promise<unknown[][]> {
  const q = await api.start(sql);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (10, 'x'), (11, 'x')`, 0);
  // 1 at 1s joins 10 and 11: (+1, j 10), (+1, j 11).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (1, 'x', ${at(1)})`, 0);
  // 11 moves to y: (-1, i 1, j 11, 1s), not late (1s is the largest time so far).
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (11, 'y')`, 0);
  // 2 at 3s joins 10: the session [1s, ...) holds i 1 and 2, both with j 10.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (2, 'x', ${at(3)})`, 0);
  // 3 at 20s: past 3s + 5s, the first session closes at 8s: 2 rows, sum(j) 20, sum(i) 3
  // (3 rows, 31 and 4 without the retraction).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (3, 'x', ${at(20)})`, 1);
  // 3 moves to w (joins nothing): (-1, i 3, j 10, 20s); the session [20s, ...) nets to no row.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (3, 'w', ${at(21)})`, 1);
  // 4 at 40s closes it at 25s: emitted with count 0.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (4, 'x', ${at(40)})`, 2);
  const rows = await q.waitForQuiet(300);
  await q.cancel();
  return rows;
}

const expected = [
  [ts(1), ts(8), 2, 20, 3],
  [ts(20), ts(25), 0, 0, 0],
];

test('session over a subquery joining versioned_kv streams: a retraction takes its row out of the session', async () => {
  const { l, r } = await sides();
  const rows = await run(
    `SELECT window_start, window_end, count(), sum(j), sum(i) FROM session((SELECT i, j, t FROM ${l} AS a JOIN ${r} AS b ON a.k = b.kk), t, 5s) GROUP BY window_start, window_end`,
    l,
    r,
  );
  assert.deepEqual(rows, expected);
});

test('session(l, t, 5s) AS a JOIN r: the same rows as through a subquery', async () => {
  const { l, r } = await sides();
  const rows = await run(
    `SELECT window_start, window_end, count(), sum(j), sum(i) FROM session(${l}, t, 5s) AS a JOIN ${r} AS b ON a.k = b.kk GROUP BY window_start, window_end`,
    l,
    r,
  );
  assert.deepEqual(rows, expected);
});

test('session over a subquery LEFT JOINing versioned_kv streams: a left row is counted once, its defaults row retracted when a right row comes', async () => {
  const { l, r } = await sides();
  const q = await api.start(
    `SELECT window_start, window_end, count(), sum(j) FROM session((SELECT i, j, t FROM ${l} AS a LEFT JOIN ${r} AS b ON a.k = b.kk), t, 5s) GROUP BY window_start, window_end`,
  );
  // 1 at 1s meets nothing: (+1, i 1, j 0).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (1, 'x', ${at(1)})`, 0);
  // 10 comes for x: (-1, j 0) and (+1, j 10), both at 1s.
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (10, 'x')`, 0);
  // 2 at 2s meets nothing: (+1, i 2, j 0).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (2, 'y', ${at(2)})`, 0);
  // 3 at 20s closes [1s, 7s): rows (1, 10) and (2, 0); 4 at 40s closes [20s, 25s).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (3, 'x', ${at(20)})`, 1);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (4, 'x', ${at(40)})`, 2);
  assert.deepEqual(await q.waitForQuiet(300), [
    [ts(1), ts(7), 2, 10],
    [ts(20), ts(25), 1, 10],
  ]);
  await q.cancel();
});

test('session over a versioned_kv stream: a new version retracts the previous one; a retraction older than a newer row is late unless WITH DELAY covers it', async () => {
  const s = await api.createStream(
    'sv',
    "(k string, v int32, t datetime64(3)) PRIMARY KEY k SETTINGS mode='versioned_kv'",
  );
  const sql = `SELECT window_start, window_end, count(), sum(v), max(v) FROM session(${s}, t, 5s) GROUP BY window_start, window_end`;
  const q = await api.start(sql);
  const delayed = await api.start(`${sql} EMIT AFTER WATERMARK WITH DELAY 5s`);
  const insert = async (row: string, total: number) => {
    await api.exec(`INSERT INTO ${s} (k, v, t) VALUES ${row}`);
    for (const query of [q, delayed]) {
      if (total > 0) await query.waitForRows(total);
      else await query.waitForQuiet(300);
    }
  };
  await insert(`('a', 1, ${at(1)})`, 0);
  // a's new version: (-1, a 1, 1s) comes before (+1, a 5, 2s): not late.
  await insert(`('a', 5, ${at(2)})`, 0);
  await insert(`('b', 2, ${at(3)})`, 0);
  // (-1, a 5, 2s) comes after b at 3s: late and dropped without a delay; kept with 5s of delay.
  await insert(`('a', 7, ${at(4)})`, 0);
  // c at 20s closes [1s, 9s).
  await insert(`('c', 0, ${at(20)})`, 1);
  assert.deepEqual(await q.waitForQuiet(300), [[ts(1), ts(9), 3, 14, 7]]);
  assert.deepEqual(await delayed.waitForQuiet(300), [[ts(1), ts(9), 2, 9, 7]]);
  await q.cancel();
  await delayed.cancel();
});

test("session over a versioned_kv stream by _tp_time: the changelog keeps each row's own _tp_time", async () => {
  const s = await api.createStream('svt', "(k string, v int32) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SELECT window_start, window_end, count(), sum(v) FROM session(${s}, 5s) GROUP BY window_start, window_end`,
  );
  await api.execAndWait(q, `INSERT INTO ${s} (k, v, _tp_time) VALUES ('a', 1, ${at(1)})`, 0);
  await api.execAndWait(q, `INSERT INTO ${s} (k, v, _tp_time) VALUES ('a', 4, ${at(2)})`, 0);
  await api.execAndWait(q, `INSERT INTO ${s} (k, v, _tp_time) VALUES ('b', 2, ${at(20)})`, 1);
  assert.deepEqual(await q.waitForQuiet(300), [[ts(1), ts(7), 1, 4]]);
  await q.cancel();
});

test('session over changelog() or a subquery over a versioned_kv stream: 48, naming what runs', async () => {
  const s = await api.createStream(
    'svc',
    "(k string, v int32, t datetime64(3)) PRIMARY KEY k SETTINGS mode='versioned_kv'",
  );
  const a = await api.createStream('sva', '(k string, v int32, t datetime64(3))');
  for (const sql of [
    `SELECT window_start, count() FROM session(changelog(${a}, k), t, 5s) GROUP BY window_start`,
    `SELECT window_start, count() FROM session((SELECT k, v, t FROM ${s} WHERE v > 0), t, 5s) GROUP BY window_start`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.code, 48, `${sql}: ${e.message}`);
    assert.match(e.message, /session\(\) windows over/);
  }
});

test('session over a join of changelog inputs: an aggregate that cannot retract is refused with 48', async () => {
  const { l, r } = await sides();
  for (const sql of [
    `SELECT window_start, latest(j) FROM session((SELECT i, j, t FROM ${l} AS a JOIN ${r} AS b ON a.k = b.kk), t, 5s) GROUP BY window_start`,
    `SELECT window_start, median(i) FROM session(${l}, t, 5s) AS a JOIN ${r} AS b ON a.k = b.kk GROUP BY window_start`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.code, 48, `${sql}: ${e.message}`);
    assert.match(e.message, /cannot retract/);
  }
});
