/**
 * Append stream JOIN versioned_kv stream through the REST API: dynamic enrichment
 * (streaming-sql-notes.md §1.9, Proton's 0014_versioned_kv_join.json ids 2, 12, 14, 16, 17).
 * Only left rows make output; each meets the right side as it is at that step, the latest row per
 * primary key (history before the query included); right updates emit nothing by themselves.
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

test('each left row meets the latest right row of its key at that step (0014 id 2)', async () => {
  const l = await api.createStream('kl', '(i int32, s string)');
  const r = await api.createStream('kr', "(ii int32, ss string) PRIMARY KEY ss SETTINGS mode='versioned_kv'");
  // Right history before the query: s1 -> 1 then 2 (latest 2), s3 -> 3.
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 's1'), (2, 's1'), (3, 's3')`);
  const q = await api.start(`SELECT i, ii, s FROM ${l} INNER JOIN ${r} ON s = ss`);
  const leftJ = await api.start(`SELECT i, ii, s FROM ${l} LEFT JOIN ${r} ON s = ss`);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (1, 's1'), (2, 's3'), (9, 'none')`);
  assertSameRows(await q.settle(2), [
    [1, 2, 's1'],
    [2, 3, 's3'],
  ]);
  // LEFT keeps the unmatched row with defaults.
  assertSameRows(await leftJ.settle(3), [
    [1, 2, 's1'],
    [2, 3, 's3'],
    [9, 0, 'none'],
  ]);
  // Right updates alone emit nothing; the next left rows see them.
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (4, 's1'), (5, 's3')`);
  assert.equal((await q.waitForQuiet(500)).length, 2);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (11, 's1'), (22, 's3')`);
  assertSameRows((await q.settle(4)).slice(2), [
    [11, 4, 's1'],
    [22, 5, 's3'],
  ]);
  await q.cancel();
  await leftJ.cancel();
});

test('the kept right rows are compacted as updates pile up; the latest row still wins', async () => {
  const l = await api.createStream('kl', '(i int32, s string)');
  const r = await api.createStream('kr', "(ii int32, ss string) PRIMARY KEY ss SETTINGS mode='versioned_kv'");
  const q = await api.start(`SELECT i, ii FROM ${l} INNER JOIN ${r} ON s = ss`);
  // 70 right updates, each followed by a left row that must see it: more than the 64 appends
  // between two compactions of the kept right rows.
  for (let v = 1; v <= 70; v++) {
    await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (${v}, 'k'), (${1000 + v}, 'other')`);
    await api.exec(`INSERT INTO ${l} (i, s) VALUES (${v}, 'k')`);
    await q.waitForRows(v);
  }
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (0, 'other')`);
  const rows = await q.settle(71);
  assert.deepEqual(
    rows.slice(0, 70),
    Array.from({ length: 70 }, (_, i) => [i + 1, i + 1]),
  );
  assert.deepEqual(rows[70], [0, 1070]);
  await q.cancel();
});

test('keys: all primary key columns, part of them, or a non-key column (0014 ids 12, 14, 17)', async () => {
  const l = await api.createStream('kl', '(i1 int32, i2 int32, s string)');
  const r = await api.createStream(
    'kr',
    "(ii1 int32, ii2 int32, ss string) PRIMARY KEY (ii1, ii2) SETTINGS mode='versioned_kv'",
  );
  const all = await api.start(`SELECT s, ss FROM ${l} INNER JOIN ${r} ON i1 = ii1 AND i2 = ii2`);
  const partial = await api.start(`SELECT s, ss, ii2 FROM ${l} INNER JOIN ${r} ON i1 = ii1`);
  const nonKey = await api.start(`SELECT i1, i2, ii1, ii2, s, ss FROM ${l} INNER JOIN ${r} ON s = ss`);
  const right = (rows: string) => api.exec(`INSERT INTO ${r} (ii1, ii2, ss) VALUES ${rows}`);
  const left = (rows: string) => api.exec(`INSERT INTO ${l} (i1, i2, s) VALUES ${rows}`);
  await right("(1, 1, 'ss11')");
  await all.waitForScanned(0);
  await left("(1, 1, 's11')");
  await all.waitForRows(1);
  await right("(1, 1, 'ss112')");
  await right("(1, 2, 'ss12')");
  await partial.waitForQuiet(300);
  await left("(1, 1, 's11'), (1, 2, 's12'), (1, 3, 'ss12')");
  // All keys: (1,1) -> ss11 then ss112; (1,2) -> ss12; (1,3) none.
  assertSameRows(await all.settle(3), [
    ['s11', 'ss11'],
    ['s11', 'ss112'],
    ['s12', 'ss12'],
  ]);
  // ii1 only: the first left row meets key (1,1) = ss11; the later three each meet (1,1) = ss112
  // and (1,2) = ss12.
  assertSameRows(await partial.settle(7), [
    ['s11', 'ss11', 1],
    ['s11', 'ss112', 1],
    ['s11', 'ss12', 2],
    ['s12', 'ss112', 1],
    ['s12', 'ss12', 2],
    ['ss12', 'ss112', 1],
    ['ss12', 'ss12', 2],
  ]);
  // A non-key column: only the latest row of each key counts ((1,1) no longer says 'ss11').
  assertSameRows(await nonKey.settle(1), [[1, 3, 1, 2, 'ss12', 'ss12']]);
  for (const q of [all, partial, nonKey]) await q.cancel();
});

test('ASOF JOIN against versioned_kv: the closest of the last keep_versions rows of the key (0014 id 3)', async () => {
  const l = await api.createStream('kl', '(i int32, s string)');
  const r = await api.createStream('kr', "(ii int32, ss string) PRIMARY KEY ss SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SELECT i, ii, s FROM ${l} ASOF JOIN ${r} ON s = ss AND i < ii SETTINGS keep_versions=2`,
  );
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 's1'), (2, 's1'), (3, 's3')`);
  await q.waitForQuiet(300);
  // s1 keeps 1, 2; s3 keeps 3: 0 < 1 -> 1 (the closest), 2 < 3 -> 3.
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (0, 's1'), (2, 's3')`);
  await q.waitForRows(2);
  // s1 now keeps 2, 4 (1 is beyond keep_versions); s3 keeps 3, 5: 0 -> 2, 4 -> 5.
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (4, 's1'), (5, 's3')`);
  await q.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (0, 's1'), (4, 's3')`);
  assertSameRows(await q.settle(4), [
    [0, 1, 's1'],
    [2, 3, 's3'],
    [0, 2, 's1'],
    [4, 5, 's3'],
  ]);
  await q.cancel();
});

test('versioned_kv JOIN versioned_kv: a changelog, replaced joined rows retracted (0014 ids 4, 13, 15)', async () => {
  const vk = (name: string, cols: string, key: string) =>
    api.createStream(name, `(${cols}) PRIMARY KEY ${key} SETTINGS mode='versioned_kv'`);
  // id 4: r(1,s1); l(0,s1); l(2,s1); r(3,s1).
  const l = await vk('vl', 'i int32, s string', 's');
  const r = await vk('vr', 'ii int32, ss string', 'ss');
  const q = await api.start(`SELECT i, ii, s, _tp_delta FROM ${l} JOIN ${r} ON s = ss`);
  const step = async (sql: string, rows: number) => {
    await api.exec(sql);
    if (rows > 0) await q.waitForRows(rows);
    else await q.waitForQuiet(300);
  };
  await step(`INSERT INTO ${r} (ii, ss) VALUES (1, 's1')`, 0);
  await step(`INSERT INTO ${l} (i, s) VALUES (0, 's1')`, 1);
  await step(`INSERT INTO ${l} (i, s) VALUES (2, 's1')`, 3);
  await step(`INSERT INTO ${r} (ii, ss) VALUES (3, 's1')`, 5);
  assert.deepEqual(await q.waitForQuiet(300), [
    [0, 1, 's1', 1],
    [0, 1, 's1', -1],
    [2, 1, 's1', 1],
    [2, 1, 's1', -1],
    [2, 3, 's1', 1],
  ]);
  await q.cancel();

  // id 15: primary key (i1, i2), joined on part of it: a new left key adds, it does not retract.
  const l2 = await vk('vl', 'i1 int32, i2 int32, s string', '(i1, i2)');
  const r2 = await vk('vr', 'ii1 int32, ii2 int32, ss string', '(ii1, ii2)');
  const q2 = await api.start(`SELECT s, ss, _tp_delta FROM ${l2} INNER JOIN ${r2} ON i1 = ii1`);
  const step2 = async (sql: string, rows: number) => {
    await api.exec(sql);
    if (rows > 0) await q2.waitForRows(rows);
    else await q2.waitForQuiet(300);
  };
  await step2(`INSERT INTO ${l2} (i1, i2, s) VALUES (1, 1, 's11')`, 0);
  await step2(`INSERT INTO ${r2} (ii1, ii2, ss) VALUES (1, 1, 'ss11')`, 1);
  await step2(`INSERT INTO ${l2} (i1, i2, s) VALUES (1, 1, 's112')`, 3);
  await step2(`INSERT INTO ${l2} (i1, i2, s) VALUES (1, 2, 's12')`, 4);
  assert.deepEqual(await q2.waitForQuiet(300), [
    ['s11', 'ss11', 1],
    ['s11', 'ss11', -1],
    ['s112', 'ss11', 1],
    ['s12', 'ss11', 1],
  ]);
  await q2.cancel();
});

test('LATEST JOIN against versioned_kv: the last row of the join key, as Proton keeps it (0018_query_state12 ids 355, 361)', async () => {
  const l = await api.createStream('kl', '(i int32, s string)');
  const r = await api.createStream(
    'kr',
    "(ii int32, ss string, g string) PRIMARY KEY ss SETTINGS mode='versioned_kv'",
  );
  // History before the query: keys a and b in group x, c in group y.
  await api.exec(`INSERT INTO ${r} (ii, ss, g) VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')`);
  const latest = await api.start(`SELECT i, ii, ss FROM ${l} LATEST JOIN ${r} ON s = g`);
  const all = await api.start(`SELECT i, ii, ss FROM ${l} JOIN ${r} ON s = g`);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (10, 'x'), (20, 'y')`);
  await latest.waitForRows(2);
  await all.waitForRows(3);
  // b moves to group y: y's last row is b; x's last row is still b's old one (Proton's LATEST
  // keeps one row per join key, which a later row of another join key does not replace).
  await api.exec(`INSERT INTO ${r} (ii, ss, g) VALUES (4, 'b', 'y')`);
  await latest.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (30, 'x'), (40, 'y')`);
  assertSameRows(await latest.settle(4), [
    [10, 2, 'b'],
    [20, 3, 'c'],
    [30, 2, 'b'],
    [40, 4, 'b'],
  ]);
  assertSameRows(await all.settle(6), [
    [10, 1, 'a'],
    [10, 2, 'b'],
    [20, 3, 'c'],
    [30, 1, 'a'],
    [40, 3, 'c'],
    [40, 4, 'b'],
  ]);
  await latest.cancel();
  await all.cancel();
});

test('an aggregation over a LEFT JOIN of two kv streams named without aliases counts defaults rows until they match', async () => {
  const r = await api.createStream('kr', "(ii int32, ss string) PRIMARY KEY ii SETTINGS mode='versioned_kv'");
  const r2 = await api.createStream('kr', "(j int32, sss string) PRIMARY KEY j SETTINGS mode='versioned_kv'");
  const q = await api.start(`SELECT count(), sum(j) FROM ${r} LEFT JOIN ${r2} ON ss = sss EMIT ON UPDATE`);
  // No left row yet: nothing to count.
  await api.execAndWait(q, `INSERT INTO ${r2} (j, sss) VALUES (5, 'a')`, 0);
  // a joins 5, b has defaults (j 0).
  await api.execAndWait(q, `INSERT INTO ${r} (ii, ss) VALUES (1, 'a'), (2, 'b')`, 1);
  // 6 matches b: its defaults row is replaced.
  await api.execAndWait(q, `INSERT INTO ${r2} (j, sss) VALUES (6, 'b')`, 2);
  // a joins 5 and 7.
  await api.execAndWait(q, `INSERT INTO ${r2} (j, sss) VALUES (7, 'a')`, 3);
  assert.deepEqual(await q.waitForQuiet(300), [
    [2, 5],
    [2, 11],
    [3, 18],
  ]);
  await q.cancel();
});

test('ASOF JOIN against versioned_kv keeps the last keep_versions rows per join key (0018_query_state12 id 359)', async () => {
  const l = await api.createStream('kl', '(i int32, k string)');
  const r = await api.createStream(
    'kr',
    "(j int32, k string, kk string) PRIMARY KEY (k, kk) SETTINGS mode='versioned_kv'",
  );
  const q = await api.start(
    `SELECT i, ${l}.k, j, ${r}.k, kk FROM ${l} LEFT ASOF JOIN ${r} ON ${l}.k = ${r}.k AND i <= j SETTINGS keep_versions = 3`,
  );
  await api.exec(
    `INSERT INTO ${r} (j, k, kk) VALUES (100, 'a', 'bb'), (102, 'a', 'cc'), (103, 'a', 'dd'), (104, 'a', 'ee')`,
  );
  await q.waitForQuiet(300);
  // Join key a keeps 102, 103, 104: 101 -> 102.
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (101, 'a')`);
  await q.waitForRows(1);
  // (a, cc) again: a keeps 103, 104, 105 (102 is pushed out though it was (a, cc)'s last row but
  // one): 101 -> 103; 106 meets nothing.
  await api.exec(`INSERT INTO ${r} (j, k, kk) VALUES (105, 'a', 'cc')`);
  await q.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (101, 'a'), (106, 'a')`);
  assertSameRows(await q.settle(3), [
    [101, 'a', 102, 'a', 'cc'],
    [101, 'a', 103, 'a', 'dd'],
    [106, 'a', 0, '', ''],
  ]);
  await q.cancel();
});

test('a subscribed LATEST JOIN against versioned_kv is checkpointed: RECOVER sees the right rows of before and after', async () => {
  const l = await api.createStream('kl', '(i int32, s string)');
  const r = await api.createStream('kr', "(ii int32, ss string) PRIMARY KEY ss SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SUBSCRIBE TO SELECT i, ii FROM ${l} LATEST JOIN ${r} ON s = ss SETTINGS checkpoint_interval=1`,
  );
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 'a'), (2, 'b')`);
  await q.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (10, 'a')`);
  assertSameRows(await q.settle(1), [[10, 1]]);
  await q.cancel();
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (3, 'a')`);
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (20, 'a'), (30, 'b')`);
  assertSameRows(await rec.settle(2), [
    [20, 3],
    [30, 2],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});
