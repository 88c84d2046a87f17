/**
 * Append stream ASOF / LATEST JOIN append stream through the REST API (Proton's HashJoin cases 5
 * and 7, streaming-sql-notes.md §1.9): a dynamic enrichment. Only left rows make output; the right
 * side keeps its last `keep_versions` rows per join key (ASOF) or its last row per key (LATEST),
 * among the rows it received since the query started.
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

test('ASOF JOIN of two append streams: the closest of the last keep_versions right rows of the key', async () => {
  const l = await api.createStream('al', '(i int32, s string)');
  const r = await api.createStream('ar', '(ii int32, ss string)');
  // Before the query: not part of the right side (the query reads r from its start).
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (100, 's1')`);
  const sql = `FROM ${l} ASOF JOIN ${r} ON s = ss AND i < ii SETTINGS keep_versions=2`;
  const inner = await api.start(`SELECT i, ii, s ${sql}`);
  const leftJ = await api.start(`SELECT i, ii, s ${sql.replace('ASOF JOIN', 'LEFT ASOF JOIN')}`);
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 's1'), (2, 's1'), (3, 's3')`);
  // Right rows alone make no output.
  assert.equal((await inner.waitForQuiet(500)).length, 0);
  // s1 keeps 1, 2; s3 keeps 3: 0 -> 1 (the smallest ii above 0), 2 -> 3, 5 -> none (100 came
  // before the query).
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (0, 's1'), (2, 's3'), (5, 's1')`);
  await inner.waitForRows(2);
  await leftJ.waitForRows(3);
  // s1 now keeps 2, 4 (1 is beyond keep_versions); s3 keeps 3, 6: 0 -> 2, 4 -> 6.
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (4, 's1'), (6, 's3')`);
  await inner.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (0, 's1'), (4, 's3')`);
  assertSameRows(await inner.settle(4), [
    [0, 1, 's1'],
    [2, 3, 's3'],
    [0, 2, 's1'],
    [4, 6, 's3'],
  ]);
  assertSameRows(await leftJ.settle(5), [
    [0, 1, 's1'],
    [2, 3, 's3'],
    [5, 0, 's1'],
    [0, 2, 's1'],
    [4, 6, 's3'],
  ]);
  await inner.cancel();
  await leftJ.cancel();
});

test('LATEST JOIN of two append streams: the last right row of the key when the left row comes', async () => {
  const l = await api.createStream('al', '(i int32, s string)');
  const r = await api.createStream('ar', '(ii int32, ss string)');
  const inner = await api.start(`SELECT i, ii FROM ${l} LATEST JOIN ${r} ON s = ss`);
  const leftJ = await api.start(`SELECT i, ii FROM ${l} LEFT LATEST JOIN ${r} ON ${l}.s = ${r}.ss`);
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 'a'), (2, 'a'), (3, 'b')`);
  assert.equal((await inner.waitForQuiet(500)).length, 0);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (10, 'a'), (20, 'b'), (30, 'c')`);
  await inner.waitForRows(2);
  await leftJ.waitForRows(3);
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (4, 'a')`);
  await inner.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (40, 'a'), (50, 'b')`);
  assertSameRows(await inner.settle(4), [
    [10, 2],
    [20, 3],
    [40, 4],
    [50, 3],
  ]);
  assertSameRows(await leftJ.settle(5), [
    [10, 2],
    [20, 3],
    [30, 0],
    [40, 4],
    [50, 3],
  ]);
  await inner.cancel();
  await leftJ.cancel();
});

test('ASOF on string columns answers 169 (0009 case1 id 28); other shapes are refused with 48', async () => {
  const l = await api.createStream('al', '(i int32, s string)');
  const r = await api.createStream('ar', '(ii int32, ss string)');
  const bad = await api.startError(`SELECT s, ss FROM ${l} ASOF JOIN ${r} ON i = ii AND s > ss`);
  assert.equal(bad.code, 169, bad.message);
  for (const sql of [
    // The right side through a CTE: its join keys are not the stream's columns.
    `WITH rr AS (SELECT ii + 1 AS k, ss FROM ${r}) SELECT i, ss FROM ${l} LATEST JOIN rr ON i = rr.k`,
    // An equal key computed on the right side.
    `SELECT i, ii FROM ${l} LATEST JOIN ${r} ON s = lower(ss)`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.code, 48, `${sql}: ${e.message}`);
  }
});

/**
 * Join alignment, the rows of Proton's 0031_join_alignment ids 1 and 2 (there over CTEs and a
 * checkpointed SUBSCRIBE): left rows wait until the right side's time reaches theirs.
 */
async function alignedRun(kind: 'ASOF' | 'LATEST', rightMode = ''): Promise<void> {
  const l = await api.createStream('gl', '(i int32, v string)');
  const r = await api.createStream('gr', `(ii int32, vv string)${rightMode}`);
  const on =
    kind === 'ASOF'
      ? 'a.i = b.ii AND a._tp_time > b._tp_time AND lag_behind(1ms, a._tp_time, b._tp_time)'
      : 'a.i = b.ii AND lag_behind(1ms, a._tp_time, b._tp_time)';
  const inner = await api.start(`SELECT a.v, b.vv FROM ${l} AS a ${kind} JOIN ${r} AS b ON ${on}`);
  const leftJ = await api.start(`SELECT a.v, b.vv FROM ${l} AS a LEFT ${kind} JOIN ${r} AS b ON ${on}`);
  const put = (s: string, i: number, v: string, sec: number) =>
    api.exec(
      `INSERT INTO ${s} (${s === l ? 'i, v' : 'ii, vv'}, _tp_time) VALUES (${i}, '${v}', '2023-01-01 00:00:${String(sec).padStart(2, '0')}')`,
    );
  await put(l, 1, 't1', 4);
  await put(r, 1, 't2', 6);
  await put(l, 1, 'tt1', 5);
  await put(l, 1, 'ttt1', 8);
  // The right side reached 6: t1 (4) and tt1 (5) are joined with what it had at their times
  // (nothing); ttt1 (8) waits. Unaligned, ttt1 would meet t2 at once.
  assertSameRows(await leftJ.settle(2), [
    ['t1', ''],
    ['tt1', ''],
  ]);
  assert.equal((await inner.waitForQuiet(300)).length, 0);
  await put(r, 1, 'tt2', 7);
  await put(l, 1, 'tttt1', 9);
  assert.equal((await inner.waitForQuiet(500)).length, 0);
  // The right side reaches 10: ttt1 (8) and tttt1 (9) meet tt2 (7), not ttt2 (10).
  await put(r, 1, 'ttt2', 10);
  assertSameRows(await inner.settle(2), [
    ['ttt1', 'tt2'],
    ['tttt1', 'tt2'],
  ]);
  assertSameRows(await leftJ.settle(4), [
    ['t1', ''],
    ['tt1', ''],
    ['ttt1', 'tt2'],
    ['tttt1', 'tt2'],
  ]);
  await inner.cancel();
  await leftJ.cancel();
}

test('lag_behind aligns an ASOF JOIN: a left row waits for the right side to reach its time (0031 id 1)', async () => {
  await alignedRun('ASOF');
});

test('lag_behind aligns a LATEST JOIN: the last right row up to the left row time (0031 id 2)', async () => {
  await alignedRun('LATEST');
});

test('lag_behind aligns an ASOF JOIN against versioned_kv (0031 id 1, its keep_versions 3)', async () => {
  await alignedRun('ASOF', " PRIMARY KEY ii SETTINGS mode='versioned_kv'");
});

test('join_quiesce_threshold_ms: left rows waiting for a quiet right side are joined with it as it is', async () => {
  const l = await api.createStream('ql', '(i int32, v string)');
  const r = await api.createStream('qr', '(ii int32, vv string)');
  const put = (s: string, i: number, v: string, sec: number) =>
    api.exec(
      `INSERT INTO ${s} (${s === l ? 'i, v' : 'ii, vv'}, _tp_time) VALUES (${i}, '${v}', '2023-01-01 00:00:${String(sec).padStart(2, '0')}')`,
    );
  const on = 'a.i = b.ii AND lag_behind(1ms, a._tp_time, b._tp_time)';
  const quiesced = await api.start(
    `SELECT a.v, b.vv FROM ${l} AS a LATEST JOIN ${r} AS b ON ${on} SETTINGS join_quiesce_threshold_ms = 200`,
  );
  const waiting = await api.start(`SELECT a.v, b.vv FROM ${l} AS a LATEST JOIN ${r} AS b ON ${on}`);
  await put(r, 1, 'r1', 5);
  // l1 (8) is past the right side's time (5): it waits, until the right side has been quiet for
  // 200 ms; then it meets the last right row up to its time, r1.
  await put(l, 1, 'l1', 8);
  assert.deepEqual(await quiesced.settle(1), [['l1', 'r1']]);
  // The next left row waits again, and is released the same way.
  await put(l, 1, 'l2', 9);
  assert.deepEqual(await quiesced.settle(2), [
    ['l1', 'r1'],
    ['l2', 'r1'],
  ]);
  // Without the setting the rows wait for the right side.
  assert.equal((await waiting.waitForQuiet(300)).length, 0);
  await put(r, 1, 'r2', 10);
  assertSameRows(await waiting.settle(2), [
    ['l1', 'r1'],
    ['l2', 'r1'],
  ]);
  assert.equal((await quiesced.waitForQuiet(300)).length, 2);
  await quiesced.cancel();
  await waiting.cancel();
  const bad = await api.startError(
    `SELECT a.v, b.vv FROM ${l} AS a LATEST JOIN ${r} AS b ON ${on} SETTINGS join_quiesce_threshold_ms = -5`,
  );
  assert.equal(bad.code, 36, bad.message);
});

test('lag_behind: bad offsets answer 36; the left side must be a named stream (48)', async () => {
  const l = await api.createStream('gl', '(i int32, v string)');
  const r = await api.createStream('gr', '(ii int32, vv string)');
  const bad = await api.startError(`SELECT v, vv FROM ${l} LATEST JOIN ${r} ON i = ii AND lag_behind('x')`);
  assert.equal(bad.code, 36, bad.message);
  const sub = await api.startError(
    `SELECT v, vv FROM (SELECT i, v, _tp_time FROM ${l}) AS a LATEST JOIN ${r} AS b ON a.i = b.ii AND lag_behind(1s)`,
  );
  assert.equal(sub.code, 48, sub.message);
  assert.match(sub.message, /lag_behind/);
});

test('an aligned LEFT ASOF JOIN is checkpointed: RECOVER keeps the held left rows and the right side (0031 id 1)', async () => {
  const l = await api.createStream('gl', '(i int32, v string)');
  const r = await api.createStream('gr', '(ii int32, vv string)');
  const put = (s: string, i: number, v: string, sec: number) =>
    api.exec(
      `INSERT INTO ${s} (${s === l ? 'i, v' : 'ii, vv'}, _tp_time) VALUES (${i}, '${v}', '2023-01-01 00:00:${String(sec).padStart(2, '0')}')`,
    );
  const q = await api.start(
    `SUBSCRIBE TO SELECT a.v, b.vv FROM ${l} AS a LEFT ASOF JOIN ${r} AS b ON a.i = b.ii AND a._tp_time > b._tp_time AND lag_behind(1ms, a._tp_time, b._tp_time) SETTINGS checkpoint_interval=1`,
  );
  await put(l, 1, 't1', 4);
  await put(r, 1, 't2', 6);
  await put(l, 1, 'tt1', 5);
  await put(l, 1, 'ttt1', 8);
  assertSameRows(await q.settle(2), [
    ['t1', ''],
    ['tt1', ''],
  ]);
  await q.cancel();
  // While nobody runs it: the right side moves to 7 (ttt1 at 8 still waits).
  await put(r, 1, 'tt2', 7);
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  await put(l, 1, 'tttt1', 9);
  assert.equal((await rec.waitForQuiet(500)).length, 0);
  await put(r, 1, 'ttt2', 10);
  // Only the held rows, each meeting tt2 (t2 came before the checkpoint and is still there).
  assertSameRows(await rec.settle(2), [
    ['ttt1', 'tt2'],
    ['tttt1', 'tt2'],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

test('aligned LATEST and LEFT ASOF joins through CTEs that split one stream in two sides (0031 id 2)', async () => {
  const s = await api.createStream('gs', '(i int32, v string)');
  const put = (i: number, v: string, sec: number) =>
    api.exec(
      `INSERT INTO ${s} (i, v, _tp_time) VALUES (${i}, '${v}', '2023-01-01 00:00:${String(sec).padStart(2, '0')}')`,
    );
  const ctes = `WITH r1 AS (SELECT i % 5 AS id, v, _tp_time FROM ${s} WHERE i < 50), r2 AS (SELECT i % 5 AS id, v, _tp_time FROM ${s} WHERE i >= 50)`;
  const latest = await api.start(
    `${ctes} SELECT r1.v, r2.v FROM r1 LATEST JOIN r2 ON r1.id = r2.id AND lag_behind(1ms, r1._tp_time, r2._tp_time)`,
  );
  const leftAsof = await api.start(
    `${ctes} SELECT r1.v, r2.v FROM r1 LEFT ASOF JOIN r2 ON r1.id = r2.id AND r1._tp_time > r2._tp_time AND lag_behind(1ms, r1._tp_time, r2._tp_time)`,
  );
  await put(1, 't1', 4);
  await put(51, 't2', 6);
  await put(1, 'tt1', 5);
  await put(1, 'ttt1', 8);
  assertSameRows(await leftAsof.settle(2), [
    ['t1', ''],
    ['tt1', ''],
  ]);
  await put(51, 'tt2', 7);
  await put(1, 'tttt1', 9);
  await put(51, 'ttt2', 10);
  assertSameRows(await latest.settle(2), [
    ['ttt1', 'tt2'],
    ['tttt1', 'tt2'],
  ]);
  assertSameRows(await leftAsof.settle(4), [
    ['t1', ''],
    ['tt1', ''],
    ['ttt1', 'tt2'],
    ['tttt1', 'tt2'],
  ]);
  await latest.cancel();
  await leftAsof.cancel();
  // A LATEST JOIN with a CTE on the right needs alignment (its rows carry no arrival order here).
  const e = await api.startError(`${ctes} SELECT r1.v, r2.v FROM r1 LATEST JOIN r2 ON r1.id = r2.id`);
  assert.equal(e.code, 48, e.message);
  const strings = await api.startError(
    `${ctes} SELECT r1.v, r2.v FROM r1 ASOF JOIN r2 ON r1.id = r2.id AND r1.v > r2.v`,
  );
  assert.equal(strings.code, 169, strings.message);
});
