/**
 * LEFT JOINs of changelog inputs beyond two sides in a tail (streaming-join-changelog.test.ts has
 * those): aggregations written directly over such a join (it runs as their subquery), chains of
 * three sides mixing LEFT and INNER, and their checkpoints. The rules the expected rows are
 * computed by hand from: a left row that no right row of a LEFT-attached side matches is there
 * with that side's defaults; when a right row comes to match it, the defaults row is retracted
 * (`_tp_delta = -1`) and the joined row added, and when the last match goes the defaults row
 * comes back; a kv side's new version retracts what the previous one joined.
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

const kv = (prefix: string, columns: string, key: string) =>
  api.createStream(prefix, `(${columns}) PRIMARY KEY ${key} SETTINGS mode='versioned_kv'`);

test('an aggregation written directly over versioned_kv LEFT JOIN versioned_kv retracts as the subquery form does', async () => {
  const l = await kv('al', 'i int32, k string', 'i');
  const r = await kv('ar', 'j int32, kk string', 'j');
  const q = await api.start(
    `SELECT a.k, count() AS n, sum(b.j) AS total FROM ${l} AS a LEFT JOIN ${r} AS b ON a.k = b.kk GROUP BY a.k EMIT ON UPDATE`,
  );
  // x: a defaults row (j 0), then the joined rows instead.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'x')`, 1);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (10, 'x')`, 2);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (11, 'x')`, 3);
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (2, 'x')`, 4);
  // Key 1 moves to y: x loses its two rows; y has a defaults row.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'y')`, 6);
  const rows = await q.waitForQuiet(300);
  assert.deepEqual(q.header, ['k', 'n', 'total']);
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

test('EMIT CHANGELOG over a LEFT JOIN of changelog inputs: retracted right rows, a deleted left key, a WHERE filtering the joined rows', async () => {
  const l = await api.createStream('cl', "(i int32, k string) PRIMARY KEY i SETTINGS mode='changelog_kv'");
  const r = await api.createStream('cr', "(j int32, kk string) SETTINGS mode='changelog'");
  const q = await api.start(
    `SELECT k, count(), sum(j) FROM ${l} AS a LEFT JOIN ${r} AS b ON a.k = b.kk WHERE i < 10 GROUP BY k EMIT CHANGELOG`,
  );
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (1, 'x')`, 1);
  // Filtered out by the WHERE: no group.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k) VALUES (20, 'z')`, 1);
  // x's defaults row goes, two joined rows come: (1, 0) -> (1, 5) -> (2, 11).
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (5, 'x')`, 3);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (6, 'x')`, 5);
  // The right row 5 retracted: (1, 6).
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk, _tp_delta) VALUES (5, 'x', -1)`, 7);
  // The left key deleted: x has no row left; it stays with the aggregates of no rows (as Proton
  // keeps a group, streaming-retract.test.ts).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, _tp_delta) VALUES (1, 'x', -1)`, 9);
  assert.deepEqual(await q.waitForQuiet(300), [
    ['x', 1, 0, 1],
    ['x', 1, 0, -1],
    ['x', 1, 5, 1],
    ['x', 1, 5, -1],
    ['x', 2, 11, 1],
    ['x', 2, 11, -1],
    ['x', 1, 6, 1],
    ['x', 1, 6, -1],
    ['x', 0, 0, 1],
  ]);
  await q.cancel();
});

test('a global aggregation and a tumble window written directly over a LEFT JOIN of versioned_kv streams', async () => {
  const l = await kv('wl', 'i int32, k string, t datetime64(3)', 'i');
  const r = await kv('wr', 'j int32, kk string', 'j');
  const global = await api.start(
    `SELECT count(), sum(j) FROM ${l} AS a LEFT JOIN ${r} AS b ON a.k = b.kk EMIT ON UPDATE`,
  );
  const windowed = await api.start(
    `SELECT window_start, count(), sum(i), sum(j) FROM tumble(${l}, t, 5s) AS a LEFT JOIN ${r} AS b ON a.k = b.kk GROUP BY window_start`,
  );
  // The window's time column left out: the left side's _tp_time (inserted equal to t here).
  const byTpTime = await api.start(
    `SELECT window_start, count() FROM tumble(${l}, 5s) AS a LEFT JOIN ${r} AS b ON a.k = b.kk GROUP BY window_start`,
  );
  const at = (s: number) => `'2024-01-01 00:00:${String(s).padStart(2, '0')}'`;
  await api.execAndWait(global, `INSERT INTO ${r} (j, kk) VALUES (10, 'x')`, 0);
  // [0, 5): 1 joins 10; 2 has no match (defaults, j 0).
  await api.execAndWait(
    global,
    `INSERT INTO ${l} (i, k, t, _tp_time) VALUES (1, 'x', ${at(1)}, ${at(1)})`,
    1,
  );
  await api.execAndWait(
    global,
    `INSERT INTO ${l} (i, k, t, _tp_time) VALUES (2, 'y', ${at(2)}, ${at(2)})`,
    2,
  );
  // 11 matches y: 2's defaults row is retracted, its joined row added: count 2, sum(j) 21.
  await api.execAndWait(global, `INSERT INTO ${r} (j, kk) VALUES (11, 'y')`, 3);
  // 3 at 7s joins 10 in [5, 10); the watermark (7s) closes [0, 5): 2 rows, sum(i) 3, sum(j) 21.
  await api.execAndWait(
    global,
    `INSERT INTO ${l} (i, k, t, _tp_time) VALUES (3, 'x', ${at(7)}, ${at(7)})`,
    4,
  );
  await windowed.waitForRows(1);
  // 4 at 12s (no match) closes [5, 10): 1 row, 3, 10.
  await api.execAndWait(
    global,
    `INSERT INTO ${l} (i, k, t, _tp_time) VALUES (4, 'q', ${at(12)}, ${at(12)})`,
    5,
  );
  assert.deepEqual(await global.waitForQuiet(300), [
    [1, 10],
    [2, 10],
    [2, 21],
    [3, 31],
    [4, 31],
  ]);
  assert.deepEqual(await windowed.settle(2, 300), [
    ['2024-01-01 00:00:00.000', 2, 3, 21],
    ['2024-01-01 00:00:05.000', 1, 3, 10],
  ]);
  assert.deepEqual(await byTpTime.settle(2, 300), [
    ['2024-01-01 00:00:00.000', 2],
    ['2024-01-01 00:00:05.000', 1],
  ]);
  await global.cancel();
  await windowed.cancel();
  await byTpTime.cancel();
});

test('versioned_kv LEFT JOIN versioned_kv LEFT JOIN versioned_kv: each right side its own defaults, retracted when it matches', async () => {
  const a = await kv('ta', 'i int32, k string', 'i');
  const b = await kv('tb', 'j int32, kk string', 'j');
  const c = await kv('tc', 'm int32, kc string', 'm');
  const q = await api.start(
    `SELECT i, j, m, _tp_delta FROM ${a} AS a LEFT JOIN ${b} AS b ON a.k = b.kk LEFT JOIN ${c} AS c ON a.k = c.kc`,
  );
  await api.execAndWait(q, `INSERT INTO ${a} (i, k) VALUES (1, 'x')`, 1);
  // b matches: the row with both defaults goes, the row with b's values and c's defaults comes.
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk) VALUES (10, 'x')`, 3);
  await api.execAndWait(q, `INSERT INTO ${c} (m, kc) VALUES (100, 'x')`, 5);
  // b's key 10 moves to z: b's defaults are back, c still matches.
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk) VALUES (10, 'z')`, 7);
  // a's key 1 moves to q: what x joined is retracted; q matches neither side.
  await api.execAndWait(q, `INSERT INTO ${a} (i, k) VALUES (1, 'q')`, 9);
  // A new left key meets both right sides as they are: b's 10 (now z), no c.
  await api.execAndWait(q, `INSERT INTO ${a} (i, k) VALUES (2, 'z')`, 10);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 0, 0, 1],
    [1, 0, 0, -1],
    [1, 10, 0, 1],
    [1, 10, 0, -1],
    [1, 10, 100, 1],
    [1, 10, 100, -1],
    [1, 0, 100, 1],
    [1, 0, 100, -1],
    [1, 0, 0, 1],
    [2, 10, 0, 1],
  ]);
  await q.cancel();
});

test('INNER then LEFT, and LEFT then INNER, over three changelog inputs', async () => {
  const a = await kv('ma', 'i int32, k string', 'i');
  const b = await kv('mb', 'j int32, kk string, t string', 'j');
  const c = await api.createStream('mc', "(m int32, kc string) SETTINGS mode='changelog'");
  // a JOIN b LEFT JOIN c ON b's column: only a row of a and b joined makes output.
  const innerLeft = await api.start(
    `SELECT i, j, m, _tp_delta FROM ${a} AS a INNER JOIN ${b} AS b ON a.k = b.kk LEFT JOIN ${c} AS c ON b.t = c.kc`,
  );
  // a LEFT JOIN b JOIN c ON a's column: the rows of a that c matches, b's defaults where b does not.
  const leftInner = await api.start(
    `SELECT i, j, m, _tp_delta FROM ${a} AS a LEFT JOIN ${b} AS b ON a.k = b.kk INNER JOIN ${c} AS c ON a.k = c.kc`,
  );
  const both = [innerLeft, leftInner];
  const step = async (sql: string, counts: [number, number]) => {
    await api.exec(sql);
    await innerLeft.waitForRows(counts[0]);
    await leftInner.waitForRows(counts[1]);
  };
  await step(`INSERT INTO ${a} (i, k) VALUES (1, 'x')`, [0, 0]);
  await step(`INSERT INTO ${b} (j, kk, t) VALUES (10, 'x', 'p')`, [1, 0]);
  await step(`INSERT INTO ${c} (m, kc) VALUES (100, 'p'), (200, 'x')`, [3, 1]);
  await step(`INSERT INTO ${c} (m, kc, _tp_delta) VALUES (100, 'p', -1)`, [5, 1]);
  await step(`INSERT INTO ${b} (j, kk, t) VALUES (10, 'z', 'p')`, [6, 3]);
  const [il, li] = await Promise.all(both.map((q) => q.waitForQuiet(300)));
  assert.deepEqual(il, [
    [1, 10, 0, 1],
    // c's p row: b's defaults on c retracted; then it goes again.
    [1, 10, 0, -1],
    [1, 10, 100, 1],
    [1, 10, 100, -1],
    [1, 10, 0, 1],
    // b's 10 moves off x: a no longer joins b.
    [1, 10, 0, -1],
  ]);
  assert.deepEqual(li, [
    [1, 10, 200, 1],
    [1, 10, 200, -1],
    [1, 0, 200, 1],
  ]);
  for (const q of both) await q.cancel();
});

test('a subscribed LEFT JOIN chain of three versioned_kv streams is checkpointed: RECOVER goes on from its sides', async () => {
  const a = await kv('ra', 'k string, x int32', 'k');
  const b = await kv('rb', 'k string, y int32', 'k');
  const c = await kv('rc', 'k string, z int32', 'k');
  const q = await api.start(
    `SUBSCRIBE TO SELECT a.k, x, y, z, _tp_delta FROM ${a} AS a LEFT JOIN ${b} AS b ON a.k = b.k LEFT JOIN ${c} AS c ON a.k = c.k SETTINGS checkpoint_interval=1`,
  );
  await q.waitForScanned(0);
  await api.exec(`INSERT INTO ${a} (k, x) VALUES ('p', 1), ('q', 2)`);
  assertSameRows(await q.settle(2, 300), [
    ['p', 1, 0, 0, 1],
    ['q', 2, 0, 0, 1],
  ]);
  await api.exec(`INSERT INTO ${b} (k, y) VALUES ('p', 10)`);
  assert.deepEqual((await q.settle(4, 300)).slice(2), [
    ['p', 1, 0, 0, -1],
    ['p', 1, 10, 0, 1],
  ]);
  await q.cancel();
  // While the query is away: q gets its c row, p a new x.
  await api.exec(`INSERT INTO ${c} (k, z) VALUES ('q', 200)`);
  await api.exec(`INSERT INTO ${a} (k, x) VALUES ('p', 3)`);
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  assertSameRows(await rec.settle(4, 300), [
    ['q', 2, 0, 0, -1],
    ['q', 2, 0, 200, 1],
    ['p', 1, 10, 0, -1],
    ['p', 3, 10, 0, 1],
  ]);
  // After the restore the sides are what they were before and during the pause.
  await api.exec(`INSERT INTO ${c} (k, z) VALUES ('p', 100)`);
  assert.deepEqual((await rec.settle(6, 300)).slice(4), [
    ['p', 3, 10, 0, -1],
    ['p', 3, 10, 100, 1],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

test('a subscribed aggregation over a LEFT JOIN of versioned_kv streams is checkpointed with its join: RECOVER retracts from where it was', async () => {
  const a = await kv('ga', 'i int32, k string', 'i');
  const b = await kv('gb', 'j int32, kk string', 'j');
  const q = await api.start(
    `SUBSCRIBE TO SELECT k, count(), sum(j) FROM ${a} AS a LEFT JOIN ${b} AS b ON a.k = b.kk GROUP BY k EMIT CHANGELOG SETTINGS checkpoint_interval=1`,
  );
  await q.waitForScanned(0);
  await api.execAndWait(q, `INSERT INTO ${a} (i, k) VALUES (1, 'x'), (2, 'y')`, 2);
  await api.execAndWait(q, `INSERT INTO ${b} (j, kk) VALUES (10, 'x')`, 4);
  assertSameRows(await q.waitForQuiet(300), [
    ['x', 1, 0, 1],
    ['y', 1, 0, 1],
    ['x', 1, 0, -1],
    ['x', 1, 10, 1],
  ]);
  await q.cancel();
  // While the query is away: y gets a match, x a second left row.
  await api.exec(`INSERT INTO ${b} (j, kk) VALUES (11, 'y')`);
  await api.exec(`INSERT INTO ${a} (i, k) VALUES (3, 'x')`);
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  assertSameRows(await rec.settle(4, 300), [
    ['y', 1, 0, -1],
    ['y', 1, 11, 1],
    ['x', 1, 10, -1],
    ['x', 2, 20, 1],
  ]);
  // 10 moves off x: both x rows are back to defaults.
  await api.exec(`INSERT INTO ${b} (j, kk) VALUES (10, 'z')`);
  assert.deepEqual((await rec.settle(6, 300)).slice(4), [
    ['x', 2, 20, -1],
    ['x', 2, 0, 1],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});
