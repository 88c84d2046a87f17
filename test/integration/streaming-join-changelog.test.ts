/**
 * Joins of changelog inputs through the REST API (streaming-sql-notes.md §1.2, §1.9, §1.11):
 * - changelog inputs only (versioned_kv, changelog_kv, changelog streams, changelog()), any number
 *   of sides joined INNER: the join's changes, each row's `_tp_delta` the product of its sides'
 *   (a kv side's new row retracts what its previous row of the key joined);
 * - an append stream first, then changelog inputs: dynamic enrichment, only the append stream's
 *   rows make output, each meeting the other sides as they are then (deleted keys and retracted
 *   rows gone).
 * Expected rows are computed by hand from those rules (they are also Proton's answers in
 * 0013_changelog_stream1 ids 25-38, 0013_changelog_stream2 ids 39-44, 0027 ids 3, 13, 14).
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

const abc = async (modes: [string, string, string]) => {
  const settings = (mode: string, key: string) =>
    mode === 'append'
      ? ''
      : mode === 'changelog'
        ? " SETTINGS mode='changelog'"
        : ` PRIMARY KEY (${key}) SETTINGS mode='${mode}'`;
  const a = await api.createStream('ja', `(i int32, k1 int32, k2 string)${settings(modes[0], 'k1, k2')}`);
  const b = await api.createStream('jb', `(j int32, kk1 int32, kk2 string)${settings(modes[1], 'kk1, kk2')}`);
  const c = await api.createStream(
    'jc',
    `(k int32, kkk1 int32, kkk2 string)${settings(modes[2], 'kkk1, kkk2')}`,
  );
  return { a, b, c };
};

test('changelog JOIN changelog JOIN changelog: retractions and additions multiply through three sides', async () => {
  const { a, b, c } = await abc(['changelog', 'changelog', 'changelog']);
  const q = await api.start(
    `SELECT a.i, b.j, c.k, _tp_delta FROM ${a} AS a INNER JOIN ${b} AS b ON a.k1 = b.kk1 AND a.k2 = b.kk2 INNER JOIN ${c} AS c ON a.k1 = c.kkk1 AND a.k2 = c.kkk2`,
  );
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (2, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (3, 1, 'k')`, 1);
  // b's row retracted: the joined row is retracted.
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2, _tp_delta) VALUES (2, 1, 'k', -1)`, 2);
  // b is empty: new a and c rows meet nothing.
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (4, 1, 'k')`, 2);
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (5, 1, 'k')`, 2);
  // A new b row meets both a rows and both c rows.
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (6, 1, 'k')`, 6);
  const rows = await q.waitForQuiet(300);
  assert.deepEqual(rows.slice(0, 2), [
    [1, 2, 3, 1],
    [1, 2, 3, -1],
  ]);
  assertSameRows(rows.slice(2), [
    [1, 6, 3, 1],
    [1, 6, 5, 1],
    [4, 6, 3, 1],
    [4, 6, 5, 1],
  ]);
  await q.cancel();
});

test('versioned_kv JOIN versioned_kv JOIN changelog: a new version retracts and re-adds, even unchanged', async () => {
  const { a, b, c } = await abc(['versioned_kv', 'versioned_kv', 'changelog']);
  const q = await api.start(
    `SELECT a.i, b.j, c.k, _tp_delta FROM ${a} AS a INNER JOIN ${b} AS b ON a.k1 = b.kk1 INNER JOIN ${c} AS c ON b.kk1 = c.kkk1 AND b.kk2 = c.kkk2`,
  );
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (3, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (2, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 1);
  // b's key (1, 'k') gets version 4: the row with 2 is retracted, the row with 4 added.
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (4, 1, 'k')`, 3);
  // a's key gets the same row again: still a new version.
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 5);
  // b's new key (2, 'k') does not meet a (k1 = 1).
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (5, 2, 'k')`, 5);
  // c's row retracted.
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2, _tp_delta) VALUES (3, 1, 'k', -1)`, 6);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 2, 3, 1],
    [1, 2, 3, -1],
    [1, 4, 3, 1],
    [1, 4, 3, -1],
    [1, 4, 3, 1],
    [1, 4, 3, -1],
  ]);
  await q.cancel();
});

test('three versioned_kv streams; a.kk2 names the only side with kk2, as Proton resolves it (0014 id 19)', async () => {
  const { a, b, c } = await abc(['versioned_kv', 'versioned_kv', 'versioned_kv']);
  const q = await api.start(
    `SELECT a.i, b.j, c.k, _tp_delta FROM ${a} AS a INNER JOIN ${b} AS b ON a.k1 = b.kk1 AND a.k2 = b.kk2 INNER JOIN ${c} AS c ON b.kk1 = c.kkk1 AND a.kk2 = c.kkk2`,
  );
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (3, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (2, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 1);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (4, 1, 'k')`, 3);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (5, 1, 'k')`, 5);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 2, 3, 1],
    [1, 2, 3, -1],
    [1, 4, 3, 1],
    [1, 4, 3, -1],
    [5, 4, 3, 1],
  ]);
  await q.cancel();
});

test('changelog_kv JOIN changelog_kv: a deleted key retracts what it joined (0013 id 10 rows)', async () => {
  const l = await api.createStream('cl', "(i int32, s string) PRIMARY KEY s SETTINGS mode='changelog_kv'");
  const r = await api.createStream('cr', "(ii int32, ss string) PRIMARY KEY ss SETTINGS mode='changelog_kv'");
  const q = await api.start(`SELECT i, s, ii, ss, _tp_delta FROM ${l} INNER JOIN ${r} ON i = ii`);
  await api.execAndWait(q, `INSERT INTO ${l} (i, s) VALUES (1, 's1')`, 0);
  await api.execAndWait(q, `INSERT INTO ${r} (ii, ss) VALUES (1, 'ss1')`, 1);
  await api.execAndWait(q, `INSERT INTO ${l} (i, s) VALUES (1, 's2')`, 2);
  await api.execAndWait(q, `INSERT INTO ${l} (i, s, _tp_delta) VALUES (1, 's1', -1)`, 3);
  await api.execAndWait(q, `INSERT INTO ${r} (ii, ss) VALUES (1, 'ss2')`, 4);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 's1', 1, 'ss1', 1],
    [1, 's2', 1, 'ss1', 1],
    [1, 's1', 1, 'ss1', -1],
    [1, 's2', 1, 'ss2', 1],
  ]);
  await q.cancel();
});

test('changelog(s, key) JOIN changelog(t, key): each side the versions of its key since the query started', async () => {
  const l = await api.createStream('fl', '(i int32, k string)');
  const r = await api.createStream('fr', '(j int32, kk string)');
  // Rows before the query are no versions yet.
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (1, 'k0')`);
  const q = await api.start(
    `SELECT i, k, j, kk, _tp_delta FROM changelog(${l}, k) AS a INNER JOIN changelog(${r}, kk) AS b ON a.i = b.j`,
  );
  // `*`: each side's columns in order without its `_tp_delta`, then the row's once (0027 id 13).
  const all = await api.start(
    `SELECT * FROM changelog(${l}, k) AS a INNER JOIN changelog(${r}, kk) AS b ON a.i = b.j`,
  );
  assert.deepEqual(
    all.header.filter((n) => !n.endsWith('_tp_time')),
    ['i', 'k', 'j', 'kk', '_tp_delta'],
  );
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'k1')`, 0);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (1, 'kk1')`, 1);
  const [first] = await all.waitForRows(1);
  assert.deepEqual([first?.[0], first?.[1], first?.[3], first?.[4], first?.[6]], [1, 'k1', 1, 'kk1', 1]);
  await all.cancel();
  // k1's new version (2) retracts the joined row and meets nothing.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (2, 'k1')`, 2);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (2, 'kk1')`, 3);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 'k1', 1, 'kk1', 1],
    [1, 'k1', 1, 'kk1', -1],
    [2, 'k1', 2, 'kk1', 1],
  ]);
  await q.cancel();
});

test('append JOIN changelog_kv: only left rows trigger; a deleted key is gone (INNER and LEFT)', async () => {
  const a = await api.createStream('ea', '(i int32, k1 int32, k2 string)');
  const b = await api.createStream(
    'eb',
    "(j int32, kk1 int32, kk2 string) PRIMARY KEY (kk1, kk2) SETTINGS mode='changelog_kv'",
  );
  const inner = await api.start(
    `SELECT a.i, b.j, b.kk2 FROM ${a} AS a INNER JOIN ${b} AS b ON a.k1 = b.kk1 AND a.k2 = b.kk2`,
  );
  const left = await api.start(`SELECT a.i, b.j, b.kk2 FROM ${a} AS a LEFT JOIN ${b} AS b ON a.k1 = b.kk1`);
  await api.execAndWait(inner, `INSERT INTO ${b} (j, kk1, kk2) VALUES (2, 1, 'k')`, 0);
  await api.execAndWait(inner, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 1);
  await left.waitForRows(1);
  await api.execAndWait(inner, `INSERT INTO ${b} (j, kk1, kk2, _tp_delta) VALUES (2, 1, 'k', -1)`, 1);
  await api.execAndWait(inner, `INSERT INTO ${a} (i, k1, k2) VALUES (3, 1, 'k')`, 1);
  await left.waitForRows(2);
  assert.deepEqual(await inner.waitForQuiet(300), [[1, 2, 'k']]);
  assert.deepEqual(await left.waitForQuiet(300), [
    [1, 2, 'k'],
    [3, 0, ''],
  ]);
  await inner.cancel();
  await left.cancel();
});

test('append JOIN changelog(b, keys) JOIN changelog: each side as it is when a left row comes', async () => {
  const { a, b, c } = await abc(['append', 'append', 'changelog']);
  const q = await api.start(
    `SELECT a.i, b.j, c.k FROM ${a} AS a INNER JOIN changelog(${b}, kk1, kk2) AS b ON a.k1 = b.kk1 AND a.k2 = b.kk2 INNER JOIN ${c} AS c ON a.k1 = c.kkk1 AND a.k2 = c.kkk2`,
  );
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (3, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (2, 1, 'k')`, 0);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 1);
  // b's key gets version 4; right-side changes alone emit nothing.
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (4, 1, 'k')`, 1);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (7, 1, 'k')`, 2);
  // c's only row retracted: the next left row meets nothing; a new c row then alone emits nothing.
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2, _tp_delta) VALUES (3, 1, 'k', -1)`, 2);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (8, 1, 'k')`, 2);
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (5, 1, 'k')`, 2);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (9, 1, 'k')`, 3);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 2, 3],
    [7, 4, 3],
    [9, 4, 5],
  ]);
  await q.cancel();
});

test('append JOIN versioned_kv JOIN versioned_kv on part of the keys (0013_changelog_stream2 id 43)', async () => {
  const { a, b, c } = await abc(['append', 'versioned_kv', 'versioned_kv']);
  const q = await api.start(
    `SELECT a.i, b.j, c.k FROM ${a} AS a INNER JOIN ${b} AS b ON a.k1 = b.kk1 INNER JOIN ${c} AS c ON b.kk2 = c.kkk2`,
  );
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (3, 2, 'k2')`, 0);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (2, 1, 'k2')`, 0);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 1);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk1, kk2) VALUES (4, 1, 'k2')`, 1);
  await api.execAndWait(q, `INSERT INTO ${c} (k, kkk1, kkk2) VALUES (5, 3, 'k2')`, 1);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k1, k2) VALUES (1, 1, 'k')`, 3);
  const rows = await q.waitForQuiet(300);
  assert.deepEqual(rows[0], [1, 2, 3]);
  assertSameRows(rows.slice(1), [
    [1, 4, 3],
    [1, 4, 5],
  ]);
  await q.cancel();
});

test('an aggregation over versioned_kv JOIN versioned_kv retracts the replaced joined rows (0014 id 5)', async () => {
  const l = await api.createStream('gl', "(i int32, s string) PRIMARY KEY s SETTINGS mode='versioned_kv'");
  const r = await api.createStream('gr', "(ii int32, ss string) PRIMARY KEY ss SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SELECT s, sum(i + ii) AS total, count() AS n FROM ${l} JOIN ${r} ON s = ss GROUP BY s EMIT ON UPDATE`,
  );
  await api.execAndWait(q, `INSERT INTO ${r} (ii, ss) VALUES (1, 's1')`, 0);
  await api.execAndWait(q, `INSERT INTO ${l} (i, s) VALUES (3, 's1')`, 1);
  // s1's left row replaced: 2 + 1, still one joined row.
  await api.execAndWait(q, `INSERT INTO ${l} (i, s) VALUES (2, 's1')`, 2);
  await api.execAndWait(q, `INSERT INTO ${r} (ii, ss) VALUES (4, 's1')`, 3);
  // Another key: its own group.
  await api.execAndWait(q, `INSERT INTO ${l} (i, s) VALUES (10, 's2'), (20, 's3')`, 3);
  await api.execAndWait(q, `INSERT INTO ${r} (ii, ss) VALUES (5, 's2')`, 4);
  assert.deepEqual(await q.waitForQuiet(300), [
    ['s1', 4, 1],
    ['s1', 3, 1],
    ['s1', 6, 1],
    ['s2', 15, 1],
  ]);
  await q.cancel();
});

test('versioned_kv LEFT JOIN versioned_kv: a defaults row until a right row matches, and again when none does', async () => {
  const l = await api.createStream('ll', "(i int32, k string) PRIMARY KEY i SETTINGS mode='versioned_kv'");
  const r = await api.createStream('lr', "(j int32, kk string) PRIMARY KEY j SETTINGS mode='versioned_kv'");
  // History before the query: its first step joins it with no defaults row sent then retracted.
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (1, 'x'), (2, 'w')`);
  await api.exec(`INSERT INTO ${r} (j, kk) VALUES (10, 'x')`);
  const q = await api.start(`SELECT i, k, j, kk, _tp_delta FROM ${l} AS a LEFT JOIN ${r} AS b ON a.k = b.kk`);
  assertSameRows(await q.waitForRows(2), [
    [1, 'x', 10, 'x', 1],
    [2, 'w', 0, '', 1],
  ]);
  // A right row comes to match w: its defaults row is retracted, the joined row added.
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (11, 'w')`, 4);
  // Key 11 moves to z: w has no match again.
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (11, 'z')`, 6);
  // Key 1 moves to q: what x joined is retracted; q matches nothing.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'q')`, 8);
  // A new left key meets the right side as it is.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (3, 'x')`, 9);
  assert.deepEqual((await q.waitForQuiet(300)).slice(2), [
    [2, 'w', 0, '', -1],
    [2, 'w', 11, 'w', 1],
    [2, 'w', 11, 'w', -1],
    [2, 'w', 0, '', 1],
    [1, 'x', 10, 'x', -1],
    [1, 'q', 0, '', 1],
    [3, 'x', 10, 'x', 1],
  ]);
  await q.cancel();
});

test('changelog_kv LEFT JOIN changelog: retracted right rows and deleted left keys', async () => {
  const l = await api.createStream('ml', "(i int32, k string) PRIMARY KEY i SETTINGS mode='changelog_kv'");
  const r = await api.createStream('mr', "(j int32, kk string) SETTINGS mode='changelog'");
  const q = await api.start(`SELECT i, k, j, kk, _tp_delta FROM ${l} AS a LEFT JOIN ${r} AS b ON a.k = b.kk`);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'x')`, 1);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (5, 'x')`, 3);
  // Two right rows: the second one adds a joined row; no defaults row is involved.
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (6, 'x')`, 4);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk, _tp_delta) VALUES (5, 'x', -1)`, 5);
  // The last matching row retracted: the defaults row is back.
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk, _tp_delta) VALUES (6, 'x', -1)`, 7);
  // The left key deleted: its defaults row is retracted.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, _tp_delta) VALUES (1, 'x', -1)`, 8);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 'x', 0, '', 1],
    [1, 'x', 0, '', -1],
    [1, 'x', 5, 'x', 1],
    [1, 'x', 6, 'x', 1],
    [1, 'x', 5, 'x', -1],
    [1, 'x', 6, 'x', -1],
    [1, 'x', 0, '', 1],
    [1, 'x', 0, '', -1],
  ]);
  await q.cancel();
});

test('tumble over versioned_kv JOIN versioned_kv: each window counts the joined rows net of their retractions', async () => {
  const l = await api.createStream(
    'wl',
    "(i int32, k string, t datetime64(3)) PRIMARY KEY i SETTINGS mode='versioned_kv'",
  );
  const r = await api.createStream('wr', "(j int32, kk string) PRIMARY KEY j SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SELECT window_start, count(), sum(i) FROM tumble(${l}, t, 5s) AS a JOIN ${r} AS b ON a.k = b.kk GROUP BY window_start`,
  );
  const at = (s: number) => `'2024-01-01 00:00:${String(s).padStart(2, '0')}'`;
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (10, 'x')`, 0);
  // Window [0, 5): 1 and 2 join 10 (+2); key 1 moves to y (-1); 11 joins 2 (+1): 2 rows, sum 4.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (1, 'x', ${at(1)})`, 0);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (2, 'x', ${at(2)})`, 0);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (1, 'y', ${at(3)})`, 0);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (11, 'x')`, 0);
  // 3 at 7s joins 10 and 11 in window [5, 10); the watermark (7s) closes [0, 5).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (3, 'x', ${at(7)})`, 1);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (4, 'x', ${at(12)})`, 2);
  assert.deepEqual(await q.waitForQuiet(300), [
    ['2024-01-01 00:00:00.000', 2, 4],
    ['2024-01-01 00:00:05.000', 2, 6],
  ]);
  await q.cancel();
});

test('an aggregation over a subquery that LEFT JOINs versioned_kv streams retracts its rows (the subquery runs as its own query)', async () => {
  const l = await api.createStream('sl', "(i int32, k string) PRIMARY KEY i SETTINGS mode='versioned_kv'");
  const r = await api.createStream('sr', "(j int32, kk string) PRIMARY KEY j SETTINGS mode='versioned_kv'");
  const q = await api.start(
    `SELECT k, count() AS n, sum(j) AS total FROM (SELECT k, j FROM ${l} AS a LEFT JOIN ${r} AS b ON a.k = b.kk) GROUP BY k EMIT ON UPDATE`,
  );
  // x: a defaults row (j 0), then the joined rows instead.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'x')`, 1);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (10, 'x')`, 2);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (11, 'x')`, 3);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (2, 'x')`, 4);
  // Key 1 moves to y: x loses its two rows; y has a defaults row.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'y')`, 6);
  const rows = await q.waitForQuiet(300);
  assert.deepEqual(rows.slice(0, 4), [
    ['x', 1, 0],
    ['x', 1, 10],
    ['x', 2, 21],
    ['x', 4, 42],
  ]);
  assertSameRows(rows.slice(4), [
    ['x', 2, 21],
    ['y', 1, 0],
  ]);
  await q.cancel();
});

test('joins of changelog inputs that are not built are refused with 48, saying what is allowed', async () => {
  const { a, b, c } = await abc(['changelog', 'append', 'versioned_kv']);
  for (const sql of [
    // An append stream after a changelog input.
    `SELECT * FROM ${a} AS a INNER JOIN ${b} AS b ON a.k1 = b.kk1`,
    // RIGHT JOIN of changelog inputs.
    `SELECT * FROM ${a} AS a RIGHT JOIN ${c} AS c ON a.k1 = c.kkk1`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.code, 48, `${sql}: ${e.message}`);
  }
});

test('a versioned_kv or changelog stream JOIN table(dim): its _tp_delta and retractions pass through (0013 join_table2 ids 126, 132)', async () => {
  const dim = await api.createStream(
    'td',
    "(ii int32, jj int32, kk string) PRIMARY KEY jj SETTINGS mode='versioned_kv'",
  );
  await api.exec(`INSERT INTO ${dim} (ii, jj, kk) VALUES (1, 2, 'a'), (2, 7, 'h'), (4, 2, 'a')`);
  const vk = await api.createStream(
    'tv',
    "(i int32, j int32, k string) PRIMARY KEY j SETTINGS mode='versioned_kv'",
  );
  const cl = await api.createStream('tc', "(i int32, j int32, k string) SETTINGS mode='changelog'");
  const q = await api.start(
    `SELECT i, j, k, ii, jj, kk, _tp_delta FROM ${vk} AS a INNER JOIN table(${dim}) AS b ON a.j = b.jj`,
  );
  const qc = await api.start(
    `SELECT i, j, k, ii, kk, _tp_delta FROM ${cl} AS a LEFT JOIN table(${dim}) AS b ON a.j = b.jj`,
  );
  await api.execAndWait(q, `INSERT INTO ${vk} (i, j, k) VALUES (1, 2, 'a')`, 1);
  await api.execAndWait(q, `INSERT INTO ${vk} (i, j, k) VALUES (1, 3, 'a')`, 1);
  await api.execAndWait(q, `INSERT INTO ${vk} (i, j, k) VALUES (1, 7, 'a')`, 2);
  // Key 2's new version retracts the row its previous version joined.
  await api.execAndWait(q, `INSERT INTO ${vk} (i, j, k) VALUES (4, 2, 'b')`, 4);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 2, 'a', 4, 2, 'a', 1],
    [1, 7, 'a', 2, 7, 'h', 1],
    [1, 2, 'a', 4, 2, 'a', -1],
    [4, 2, 'b', 4, 2, 'a', 1],
  ]);
  await api.execAndWait(qc, `INSERT INTO ${cl} (i, j, k) VALUES (1, 2, 'a'), (5, 5, 'x')`, 2);
  await api.execAndWait(qc, `INSERT INTO ${cl} (i, j, k, _tp_delta) VALUES (1, 2, 'a', -1)`, 3);
  assert.deepEqual(await qc.waitForQuiet(300), [
    [1, 2, 'a', 4, 'a', 1],
    [5, 5, 'x', 0, '', 1],
    [1, 2, 'a', 4, 'a', -1],
  ]);
  await q.cancel();
  await qc.cancel();
});

test('a CTE passing a join through, joined with table(dim): one chain of joins (0013 join_table5 ids 189, 200)', async () => {
  const s1 = await api.createStream(
    'c1',
    "(i int32, j int32, k string) PRIMARY KEY j SETTINGS mode='versioned_kv'",
  );
  const s2 = await api.createStream('c2', '(i2 int32, j2 int32, k2 string)');
  const s3 = await api.createStream(
    'c3',
    "(i3 int32, j3 int32, k3 string) PRIMARY KEY j3 SETTINGS mode='versioned_kv'",
  );
  await api.exec(`INSERT INTO ${s3} (i3, j3, k3) VALUES (4, 2, 'c'), (6, 3, '7')`);
  await api.exec(`INSERT INTO ${s2} (i2, j2, k2) VALUES (8, 2, 'a'), (4, 2, 'a')`);
  const columns = 'i, j, k, i2, j2, k2, i3, j3, k3, _tp_delta';
  // versioned_kv JOIN changelog(s2, j2) (from the query's start), then table(s3).
  const zset = await api.start(
    `WITH t AS (SELECT * FROM ${s1} AS a JOIN changelog(${s2}, j2) AS b ON a.j = b.j2) SELECT ${columns} FROM t INNER JOIN table(${s3}) AS d ON t.j = d.j3`,
  );
  // versioned_kv JOIN table(s2) (both rows of key 2), then LEFT JOIN table(s3).
  const dims = await api.start(
    `WITH t AS (SELECT * FROM ${s1} AS a JOIN table(${s2}) AS b ON a.j = b.j2) SELECT ${columns} FROM t LEFT JOIN table(${s3}) AS d ON t.j = d.j3`,
  );
  await api.execAndWait(zset, `INSERT INTO ${s2} (i2, j2, k2) VALUES (1, 2, 'a')`, 0);
  await api.execAndWait(zset, `INSERT INTO ${s1} (i, j, k) VALUES (1, 2, 'a')`, 1);
  await dims.waitForRows(2);
  await api.execAndWait(zset, `INSERT INTO ${s1} (i, j, k) VALUES (5, 2, 'a')`, 3);
  await api.execAndWait(dims, `INSERT INTO ${s1} (i, j, k) VALUES (9, 9, 'z')`, 6);
  assert.deepEqual(await zset.waitForQuiet(300), [
    [1, 2, 'a', 1, 2, 'a', 4, 2, 'c', 1],
    [1, 2, 'a', 1, 2, 'a', 4, 2, 'c', -1],
    [5, 2, 'a', 1, 2, 'a', 4, 2, 'c', 1],
  ]);
  const rows = await dims.waitForQuiet(300);
  assertSameRows(rows.slice(0, 2), [
    [1, 2, 'a', 8, 2, 'a', 4, 2, 'c', 1],
    [1, 2, 'a', 4, 2, 'a', 4, 2, 'c', 1],
  ]);
  assertSameRows(rows.slice(2, 4), [
    [1, 2, 'a', 8, 2, 'a', 4, 2, 'c', -1],
    [1, 2, 'a', 4, 2, 'a', 4, 2, 'c', -1],
  ]);
  assertSameRows(rows.slice(4, 6), [
    [5, 2, 'a', 8, 2, 'a', 4, 2, 'c', 1],
    [5, 2, 'a', 4, 2, 'a', 4, 2, 'c', 1],
  ]);
  // Key 9 meets nothing in table(s2): the inner join of the CTE drops it.
  assert.equal(rows.length, 6);
  await zset.cancel();
  await dims.cancel();
});

test('append LEFT JOIN changelog(cte, key) where the CTE picks columns of a stream (0027 id 9)', async () => {
  const l = await api.createStream('pl', '(i int32, k string)');
  const r = await api.createStream('pr', '(j int32, kk string, extra int32)');
  const q = await api.start(
    `WITH cte AS (SELECT j, kk FROM ${r}) SELECT i, k, j, kk FROM ${l} AS a LEFT JOIN changelog(cte, kk) AS b ON a.i = b.j`,
  );
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (1, 'kk1')`, 0);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'k1')`, 1);
  // kk1's new version replaces j = 1 with j = 2.
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (2, 'kk1')`, 1);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (2, 'k1')`, 2);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'k2')`, 3);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 'k1', 1, 'kk1'],
    [2, 'k1', 2, 'kk1'],
    [1, 'k2', 0, ''],
  ]);
  await q.cancel();
});

test('a window over an append stream enriched from a versioned_kv stream (tumble(s) JOIN kv)', async () => {
  const s = await api.createStream('wa', '(k int32, v int32, t datetime64(3))');
  const d = await api.createStream('wd', "(k int32, name string) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  await api.exec(`INSERT INTO ${d} (k, name) VALUES (1, 'x')`);
  const q = await api.start(
    `SELECT window_start, name, sum(v) FROM tumble(${s}, t, 5s) AS e JOIN ${d} AS d ON e.k = d.k GROUP BY window_start, name`,
  );
  await api.exec(
    `INSERT INTO ${s} (k, v, t) VALUES (1, 2, '2024-01-01 00:00:01'), (1, 3, '2024-01-01 00:00:02')`,
  );
  await api.exec(`INSERT INTO ${s} (k, v, t) VALUES (1, 9, '2024-01-01 00:00:09')`);
  assert.deepEqual(await q.waitForRows(1), [['2024-01-01 00:00:00.000', 'x', 5]]);
  await q.cancel();
});

test('a subquery over an append stream enriched from a versioned_kv stream', async () => {
  const s = await api.createStream('qa', '(k int32, v int32)');
  const d = await api.createStream('qd', "(k int32, name string) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  await api.exec(`INSERT INTO ${d} (k, name) VALUES (1, 'x')`);
  const q = await api.start(
    `SELECT v, name FROM (SELECT k, v FROM ${s} WHERE v > 1) AS e JOIN ${d} AS d ON e.k = d.k`,
  );
  await api.execAndWait(q, `INSERT INTO ${s} (k, v) VALUES (1, 2), (1, 0)`, 1);
  await api.execAndWait(q, `INSERT INTO ${d} (k, name) VALUES (1, 'y')`, 1);
  await api.execAndWait(q, `INSERT INTO ${s} (k, v) VALUES (1, 3)`, 2);
  assert.deepEqual(await q.waitForQuiet(300), [
    [2, 'x'],
    [3, 'y'],
  ]);
  await q.cancel();
});
