/**
 * Where a streaming query starts, through the REST API: `SETTINGS seek_to=` (earliest, a sequence
 * number, a relative and an absolute time) and rewind predicates on `_tp_sn` / `_tp_time` /
 * earliest_ts(), which backfill the matching history and then keep streaming (the predicate keeps
 * filtering new rows). Semantics: streaming-sql-notes.md §1.4 and the Proton smoke suite
 * 0020_seek_to.json: rows i = 1..4 at 2022-12-01 00:00:0i.111, one insert each (sequence numbers
 * 0..3).
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

let n = 0;
/** A stream with the four rows of 0020_seek_to.json, each its own insert (sn 0..3). */
async function seeded(): Promise<string> {
  const name = `rewind_${++n}`;
  await api.exec(
    `CREATE STREAM ${name} (i int32, s string, t datetime64(3, 'UTC')) SETTINGS event_time_column='t'`,
  );
  for (const i of [1, 2, 3, 4])
    await api.exec(`INSERT INTO ${name} (i, s, t) VALUES (${i}, 's${i}', '2022-12-01 00:00:0${i}.111')`);
  return name;
}

async function insert(name: string, i: number, t: string): Promise<void> {
  await api.exec(`INSERT INTO ${name} (i, s, t) VALUES (${i}, 's${i}', '2022-12-01 ${t}')`);
}

/** Wait for `count` rows, then a quiet moment; answer every row. */
test('seek_to and _tp_sn predicates backfill from a sequence number, then keep streaming', async () => {
  const s = await seeded();
  const earliest = await api.start(`SELECT i FROM ${s} SETTINGS seek_to='earliest'`);
  const fromSn1 = await api.start(`SELECT i FROM ${s} SETTINGS seek_to='1'`);
  const snGe1 = await api.start(`SELECT i FROM ${s} WHERE _tp_sn >= 1`);
  const snEq1 = await api.start(`SELECT i FROM ${s} WHERE _tp_sn = 1`);
  const snLt2 = await api.start(`SELECT i FROM ${s} WHERE _tp_sn < 2`);
  const latest = await api.start(`SELECT i FROM ${s} SETTINGS seek_to='latest'`);
  // History: earliest -> sn 0..3 (i 1..4); seek_to='1' and _tp_sn >= 1 -> sn 1..3 (i 2..4);
  // _tp_sn = 1 -> i 2; _tp_sn < 2 -> i 1, 2; latest -> nothing.
  assert.deepEqual(await earliest.settle(4), [[1], [2], [3], [4]]);
  assert.deepEqual(await fromSn1.settle(3), [[2], [3], [4]]);
  assert.deepEqual(await snGe1.settle(3), [[2], [3], [4]]);
  assert.deepEqual(await snEq1.settle(1), [[2]]);
  assert.deepEqual(await snLt2.settle(2), [[1], [2]]);
  assert.deepEqual(latest.rows, []);
  // Then they keep streaming: i=5 gets sn 4, which every query but `= 1` and `< 2` lets through.
  await insert(s, 5, '00:00:05.111');
  await earliest.waitForRows(5);
  await fromSn1.waitForRows(4);
  await snGe1.waitForRows(4);
  await latest.waitForRows(1);
  assert.deepEqual(earliest.rows.at(-1), [5]);
  assert.deepEqual(fromSn1.rows.at(-1), [5]);
  assert.deepEqual(snGe1.rows.at(-1), [5]);
  assert.deepEqual(latest.rows, [[5]]);
  assert.deepEqual(await snEq1.waitForQuiet(400), [[2]]);
  assert.deepEqual(await snLt2.waitForQuiet(400), [[1], [2]]);
  for (const q of [earliest, fromSn1, snGe1, snEq1, snLt2, latest]) await q.cancel();
});

test('_tp_time predicates and earliest_ts() backfill matching history; new rows are still filtered', async () => {
  const s = await seeded();
  const ge = await api.start(`SELECT i FROM ${s} WHERE _tp_time >= '2022-12-01 00:00:02.111'`);
  const lt = await api.start(`SELECT i FROM ${s} WHERE _tp_time < '2022-12-01 00:00:03.111'`);
  const beyond = await api.start(`SELECT i FROM ${s} WHERE _tp_time >= '2022-12-01 00:00:04.112'`);
  const all = await api.start(`SELECT i FROM ${s} WHERE _tp_time > earliest_ts()`);
  const alias = await api.start(
    `WITH cte AS (SELECT i, _tp_time AS event_time FROM ${s}) SELECT i FROM cte WHERE event_time >= '2022-12-01 00:00:03.111'`,
  );
  assert.deepEqual(await ge.settle(3), [[2], [3], [4]]);
  assert.deepEqual(await lt.settle(2), [[1], [2]]);
  assert.deepEqual(await beyond.settle(0, 1_000), []);
  assert.deepEqual(await all.settle(4), [[1], [2], [3], [4]]);
  // A predicate on a CTE column that is `_tp_time` under another name rewinds too (0020 id 6).
  assert.deepEqual(await alias.settle(2), [[3], [4]]);
  // New rows: i=5 at 00:00:05.111 and i=0 at 00:00:00.111 (event times, not arrival, decide).
  await insert(s, 5, '00:00:05.111');
  await insert(s, 0, '00:00:00.111');
  await all.waitForRows(6);
  assert.deepEqual(all.rows.slice(4), [[5], [0]]);
  await ge.waitForRows(4);
  await lt.waitForRows(3);
  await beyond.waitForRows(1);
  await alias.waitForRows(3);
  assert.deepEqual(await ge.waitForQuiet(300), [[2], [3], [4], [5]]);
  assert.deepEqual(await lt.waitForQuiet(300), [[1], [2], [0]]);
  assert.deepEqual(beyond.rows, [[5]]);
  assert.deepEqual(alias.rows, [[3], [4], [5]]);
  for (const q of [ge, lt, beyond, all, alias]) await q.cancel();
});

test('earliest_ts() only compares with > and >=; a rewind column the subquery does not project is unknown', async () => {
  const s = await seeded();
  // 0020 id 13: =, !=, <, <= with earliest_ts() give error 183 (UNEXPECTED_EXPRESSION).
  for (const op of ['=', '!=', '<', '<=']) {
    const e = await api.startError(`SELECT s FROM ${s} WHERE _tp_time ${op} earliest_ts()`);
    assert.equal(e.code, 183, `${op}: ${JSON.stringify(e)}`);
  }
  // 0020 id 12: the subquery does not project _tp_sn / _tp_time: error 47 (UNKNOWN_IDENTIFIER).
  for (const where of ['_tp_sn > 2', "_tp_time > '2022-12-01 00:00:04.111'"]) {
    const e = await api.startError(`SELECT * FROM (SELECT s FROM ${s}) WHERE ${where}`);
    assert.equal(e.code, 47, `${where}: ${JSON.stringify(e)}`);
  }
});

test('seek_to a relative and an absolute time', async () => {
  // Without event_time_column, _tp_time is the insert time, so event time and arrival agree.
  await api.exec('CREATE STREAM rewind_now (i int32)');
  await api.exec('INSERT INTO rewind_now (i) VALUES (1)');
  await new Promise((r) => setTimeout(r, 50));
  const between = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 50));
  await api.exec('INSERT INTO rewind_now (i) VALUES (2)');
  const lastHour = await api.start("SELECT i FROM rewind_now SETTINGS seek_to='-1h'");
  const absolute = await api.start(`SELECT i FROM rewind_now SETTINGS seek_to='${between}'`);
  // -1h: both rows are younger than an hour. The absolute time lies between the two inserts.
  assert.deepEqual(await lastHour.settle(2), [[1], [2]]);
  assert.deepEqual(await absolute.settle(1), [[2]]);
  await api.exec('INSERT INTO rewind_now (i) VALUES (3)');
  await lastHour.waitForRows(3);
  await absolute.waitForRows(2);
  assert.deepEqual(lastHour.rows, [[1], [2], [3]]);
  assert.deepEqual(absolute.rows, [[2], [3]]);
  for (const q of [lastHour, absolute]) await q.cancel();
});

test('a rewound window aggregation emits the windows the backfill closed, then keeps streaming', async () => {
  const s = await seeded();
  const q = await api.start(
    `SELECT window_start, count() AS c FROM tumble(${s}, 2s) WHERE _tp_time >= '2022-12-01 00:00:01.111' GROUP BY window_start`,
  );
  // Backfill 01.111 .. 04.111: watermark floor(04.111, 2s) = 00:00:04 closes [00, 02) (1 row) and
  // [02, 04) (2 rows), emitted when the backfill ends (0020 id 6). [04, 06) stays open.
  await q.waitForRows(2);
  // Live: 00:00:06.500 -> watermark 00:00:06 closes [04, 06) with 04.111.
  await insert(s, 6, '00:00:06.500');
  await q.waitForRows(3);
  assert.deepEqual(await q.waitForQuiet(400), [
    ['2022-12-01 00:00:00.000', 1],
    ['2022-12-01 00:00:02.000', 2],
    ['2022-12-01 00:00:04.000', 1],
  ]);
  await q.cancel();
});

test('a rewound global aggregation counts the history in its first emit, then new rows', async () => {
  const s = await seeded();
  const q = await api.start(
    `SELECT count() AS c, sum(i) AS total FROM ${s} WHERE _tp_sn >= 0 EMIT PERIODIC 1s`,
  );
  // No intermediate results during the backfill: the first emit has all four rows (sum 10).
  await q.waitForRows(1);
  assert.deepEqual(q.rows, [[4, 10]]);
  await insert(s, 5, '00:00:05.111');
  await q.waitForRows(2);
  assert.deepEqual(q.rows, [
    [4, 10],
    [5, 15],
  ]);
  await q.cancel();
});

test('LIMIT ends a rewound query during its backfill', async () => {
  const s = await seeded();
  const q = await api.start(`SELECT i FROM ${s} LIMIT 2 SETTINGS seek_to='earliest'`);
  assert.equal((await q.waitForEnd()).status, 'finished');
  assert.deepEqual(q.rows, [[1], [2]]);
});
