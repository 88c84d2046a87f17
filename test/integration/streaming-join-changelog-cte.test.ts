/**
 * The pieces of 0031_join_alignment id 3 (a join of `changelog()` of filtering CTEs, aligned by
 * `lag_behind`, under an aggregation), each on its own through the REST API:
 * - `changelog(cte, key)` of a CTE that filters and computes its key: the CTE runs as its own
 *   query; only its rows are versions of their key, each retracting the key's previous version;
 * - an aggregation over a subquery joining `changelog(s, key)` sides: the subquery runs as its own
 *   query and the aggregation folds its rows with their `_tp_delta`;
 * - `changelog(r1, id) JOIN changelog(r2, id)` of such CTEs: a join of changelogs whose sides are
 *   those queries' rows (changelog-derived-side.ts), also in a subquery an aggregation reads, the
 *   outer query's CTEs moving into it (changelog-cte-push.ts);
 * - `lag_behind` in such a join of two changelogs, INNER or LEFT (join-changelog-alignment.ts),
 *   with RECOVER; other joins of changelogs with `lag_behind` are refused with 48.
 * Expected rows are computed by hand from those rules.
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

test('changelog(cte, key) of a CTE that filters and computes its key: rows it drops are no versions', async () => {
  const s = await api.createStream('cf', '(i int, v string)');
  const q = await api.start(
    `WITH r1 AS (SELECT i % 5 AS id, v, _tp_time AS time FROM ${s} WHERE i < 50) SELECT id, v, _tp_delta FROM changelog(r1, id)`,
  );
  await api.execAndWait(q, `INSERT INTO ${s} (i, v) VALUES (1, 't1')`, 1);
  // Key 1 again (6 % 5): retracts t1.
  await api.execAndWait(q, `INSERT INTO ${s} (i, v) VALUES (6, 'tt1')`, 3);
  // Filtered out by the CTE (i >= 50), though 51 % 5 is key 1: nothing.
  await api.execAndWait(q, `INSERT INTO ${s} (i, v) VALUES (51, 'x')`, 3);
  // Another key: no retraction.
  await api.execAndWait(q, `INSERT INTO ${s} (i, v) VALUES (2, 'a2')`, 4);
  await api.execAndWait(q, `INSERT INTO ${s} (i, v) VALUES (11, 'ttt1')`, 6);
  assert.deepEqual(await q.waitForQuiet(300), [
    [1, 't1', 1],
    [1, 't1', -1],
    [1, 'tt1', 1],
    [2, 'a2', 1],
    [1, 'tt1', -1],
    [1, 'ttt1', 1],
  ]);
  await q.cancel();
});

test('an aggregation over a subquery joining changelog(s, key) sides counts the joined rows net of retractions', async () => {
  const l = await api.createStream('ncl', '(i int, v string)');
  const r = await api.createStream('ncr', '(i int, v string)');
  const q = await api.start(
    `SELECT checked, count() AS n FROM (SELECT a.v, b.v, a.i > 0 AS checked FROM changelog(${l}, i) AS a JOIN changelog(${r}, i) AS b ON a.i = b.i) GROUP BY checked EMIT ON UPDATE`,
  );
  await api.execAndWait(q, `INSERT INTO ${l} (i, v) VALUES (1, 'a1')`, 0);
  // (a1, b1) joined.
  await api.execAndWait(q, `INSERT INTO ${r} (i, v) VALUES (1, 'b1')`, 1);
  // A new version of key 1 on the left: (a1, b1) retracted, (a1', b1) added: still one row.
  await api.execAndWait(q, `INSERT INTO ${l} (i, v) VALUES (1, 'a1x')`, 2);
  // Key 2 on both sides: a second joined row.
  await api.execAndWait(q, `INSERT INTO ${l} (i, v) VALUES (2, 'a2')`, 2);
  await api.execAndWait(q, `INSERT INTO ${r} (i, v) VALUES (2, 'b2')`, 3);
  const rows = await q.waitForQuiet(300);
  assert.deepEqual(rows, [
    [true, 1],
    [true, 1],
    [true, 2],
  ]);
  await q.cancel();
});

const splitCtes = (s: string) =>
  `WITH r1 AS (SELECT i % 5 AS id, v, _tp_time AS time FROM ${s} WHERE i < 50), r2 AS (SELECT i % 5 AS id, v, _tp_time AS time FROM ${s} WHERE i >= 50) `;
const joinOfCtes = 'FROM changelog(r1, id) AS r1 JOIN changelog(r2, id) AS r2 ON r1.id = r2.id';
const at = (s: string, i: number, v: string, t: string) =>
  `INSERT INTO ${s} (i, v, _tp_time) VALUES (${i}, '${v}', '2023-01-01 00:00:0${t}')`;

test('changelog(r1, id) JOIN changelog(r2, id) of CTEs splitting one stream: a join of changelogs of their rows', async () => {
  const s = await api.createStream('cj', '(i int, v string)');
  const q = await api.start(
    `${splitCtes(s)}SELECT r1.v, r2.v, r1.time >= r2.time AS checked, _tp_delta ${joinOfCtes}`,
  );
  await api.execAndWait(q, at(s, 1, 't1', '4'), 0);
  // r2's key 1 (51 % 5): joins r1's t1.
  await api.execAndWait(q, at(s, 51, 't2', '6'), 1);
  // r1's key 1 again: (t1, t2) retracted, (tt1, t2) added.
  await api.execAndWait(q, at(s, 1, 'tt1', '6'), 3);
  // Key 2 on r1 only: nothing.
  await api.execAndWait(q, at(s, 2, 'a2', '6'), 3);
  await api.execAndWait(q, at(s, 1, 'ttt1', '7'), 5);
  assert.deepEqual(await q.waitForQuiet(300), [
    ['t1', 't2', false, 1],
    ['t1', 't2', false, -1],
    ['tt1', 't2', true, 1],
    ['tt1', 't2', true, -1],
    ['ttt1', 't2', true, 1],
  ]);
  await q.cancel();
});

test("an aggregation over a subquery joining changelog() of the outer query's CTEs: the CTEs move into the subquery", async () => {
  const s = await api.createStream('cn', '(i int, v string)');
  const q = await api.start(
    `${splitCtes(s)}SELECT checked, count() FROM (SELECT r1.v, r2.v, r1.time >= r2.time AS checked ${joinOfCtes}) GROUP BY checked EMIT ON UPDATE`,
  );
  await api.execAndWait(q, at(s, 1, 't1', '4'), 0);
  await api.execAndWait(q, at(s, 51, 't2', '6'), 1);
  // (t1, t2, false) retracted: the false group counts 0; (tt1, t2, true) counted.
  await api.execAndWait(q, at(s, 1, 'tt1', '6'), 3);
  // (tt1, t2) retracted and (ttt1, t2) added: true still 1.
  await api.execAndWait(q, at(s, 1, 'ttt1', '7'), 4);
  assert.deepEqual(await q.waitForQuiet(300), [
    [false, 1],
    [false, 0],
    [true, 1],
    [true, 1],
  ]);
  await q.cancel();
});

const aligned = `${joinOfCtes} AND lag_behind(1ms, r2.time, r1.time)`;

test('lag_behind in a join of changelogs: each side applies once the other side is far enough in time (0031 id 3)', async () => {
  const s = await api.createStream('ca', '(i int, v string)');
  const q = await api.start(
    `${splitCtes(s)}SELECT r1.v, r2.v, r1.time >= r2.time AS checked, _tp_delta ${aligned}`,
  );
  // r1 (left) t1@4: the right side has no time yet, it waits.
  await api.execAndWait(q, at(s, 1, 't1', '4'), 0);
  // r2 (right) t2@6: left 4 - 1ms < 6, t1 applies (meets no right row); t2 waits (6 > 4 - 1ms).
  await api.execAndWait(q, at(s, 51, 't2', '6'), 0);
  // Left tt1@6: 6 - 1ms < 6, applies (retracting t1, which joined nothing); t2 still waits.
  await api.execAndWait(q, at(s, 1, 'tt1', '6'), 0);
  // Left ttt1@7: t2 applies (6 <= 7 - 1ms) and meets tt1; ttt1 waits (7 - 1ms >= 6).
  await api.execAndWait(q, at(s, 1, 'ttt1', '7'), 1);
  // Right tt2@7: ttt1 applies (7 - 1ms < 7): (tt1, t2) retracted, (ttt1, t2) added; tt2 waits.
  await api.execAndWait(q, at(s, 51, 'tt2', '7'), 3);
  assert.deepEqual(await q.waitForQuiet(300), [
    ['tt1', 't2', true, 1],
    ['tt1', 't2', true, -1],
    ['ttt1', 't2', true, 1],
  ]);
  await q.cancel();
});

test('a subscribed aggregation over an aligned join of changelogs: RECOVER takes back the waiting rows and the sides', async () => {
  const s = await api.createStream('cs', '(i int, v string)');
  const q = await api.start(
    `SUBSCRIBE TO ${splitCtes(s)}SELECT checked, count() FROM (SELECT r1.v, r2.v, r1.time >= r2.time AS checked ${aligned}) GROUP BY checked EMIT ON UPDATE SETTINGS checkpoint_interval=1`,
  );
  await q.waitForScanned(0);
  await api.execAndWait(q, at(s, 1, 't1', '4'), 0);
  await api.execAndWait(q, at(s, 51, 't2', '6'), 0);
  await api.execAndWait(q, at(s, 1, 'tt1', '6'), 0);
  // (tt1, t2) counted: never (t1, t2), whose false group would be retracted again.
  await api.execAndWait(q, at(s, 1, 'ttt1', '7'), 1);
  assert.deepEqual(await q.waitForQuiet(300), [[true, 1]]);
  await q.cancel();
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  await rec.waitForQuiet(300);
  // ttt1 (waiting at the checkpoint) applies: (tt1, t2) for (ttt1, t2), still one true row.
  await api.execAndWait(rec, at(s, 51, 'tt2', '7'), 1);
  // tt2 applies: (ttt1, t2) for (ttt1, tt2).
  await api.execAndWait(rec, at(s, 1, 'tttt1', '9'), 2);
  // tttt1 applies: (ttt1, tt2) for (tttt1, tt2).
  await api.execAndWait(rec, at(s, 51, 'ttt2', '9'), 3);
  assert.deepEqual(await rec.waitForQuiet(300), [
    [true, 1],
    [true, 1],
    [true, 1],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

const alignedLeft = `FROM changelog(r1, id) AS r1 LEFT JOIN changelog(r2, id) AS r2 ON r1.id = r2.id AND lag_behind(1ms, r2.time, r1.time)`;

test('lag_behind in a LEFT JOIN of changelogs: a left row applied before any right row has defaults, retracted when one applies', async () => {
  const s = await api.createStream('cl', '(i int, v string)');
  const q = await api.start(`${splitCtes(s)}SELECT r1.v, r2.v, _tp_delta ${alignedLeft}`);
  // Left t1@4: the right side has no time yet, it waits.
  await api.execAndWait(q, at(s, 1, 't1', '4'), 0);
  // Right t2@6: t1 applies (4 - 1ms < 6) and meets no right row (t2 waits: 6 > 4 - 1ms).
  await api.execAndWait(q, at(s, 51, 't2', '6'), 1);
  // Left tt1@6 applies (6 - 1ms < 6): t1's defaults row retracted, tt1's added.
  await api.execAndWait(q, at(s, 1, 'tt1', '6'), 3);
  // Left ttt1@7: t2 applies (6 <= 7 - 1ms) and matches tt1, whose defaults row goes; ttt1 waits.
  await api.execAndWait(q, at(s, 1, 'ttt1', '7'), 5);
  // Right tt2@7: ttt1 applies (7 - 1ms < 7): (tt1, t2) retracted, (ttt1, t2) added; tt2 waits.
  await api.execAndWait(q, at(s, 51, 'tt2', '7'), 7);
  assert.deepEqual(await q.waitForQuiet(300), [
    ['t1', '', 1],
    ['t1', '', -1],
    ['tt1', '', 1],
    ['tt1', '', -1],
    ['tt1', 't2', 1],
    ['tt1', 't2', -1],
    ['ttt1', 't2', 1],
  ]);
  await q.cancel();
});

test('a subscribed aggregation written over an aligned LEFT JOIN of changelogs: RECOVER takes back the waiting rows', async () => {
  const s = await api.createStream('cq', '(i int, v string)');
  const q = await api.start(
    `SUBSCRIBE TO ${splitCtes(s)}SELECT r2.v, count() ${alignedLeft} GROUP BY r2.v EMIT ON UPDATE SETTINGS checkpoint_interval=1`,
  );
  await q.waitForScanned(0);
  await api.execAndWait(q, at(s, 1, 't1', '4'), 0);
  // t1 applies with defaults: the '' group counts 1.
  await api.execAndWait(q, at(s, 51, 't2', '6'), 1);
  // Left ttt1@7: t2 applies and matches t1: '' counts 0, t2 counts 1; ttt1 waits.
  await api.execAndWait(q, at(s, 1, 'ttt1', '7'), 3);
  assert.deepEqual((await q.waitForQuiet(300)).slice(0, 1), [['', 1]]);
  assertSameRows(q.rows.slice(1), [
    ['', 0],
    ['t2', 1],
  ]);
  await q.cancel();
  const rec = await api.start(`RECOVER FROM '${q.id}'`);
  await rec.waitForQuiet(300);
  // Right tt2@7: ttt1 (waiting at the checkpoint) applies, replacing t1: t2 still counts 1.
  await api.execAndWait(rec, at(s, 51, 'tt2', '7'), 1);
  // Left t4@9 (key 1): tt2 (waiting) applies (7 <= 9 - 1ms) and replaces t2: t2 counts 0, tt2 1;
  // t4 waits (9 - 1ms >= 7).
  await api.execAndWait(rec, at(s, 1, 't4', '9'), 3);
  const rows = await rec.waitForQuiet(300);
  assert.deepEqual(rows.slice(0, 1), [['t2', 1]]);
  assertSameRows(rows.slice(1), [
    ['t2', 0],
    ['tt2', 1],
  ]);
  await rec.cancel();
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

test('lag_behind in other joins of changelogs answers 48 saying what runs', async () => {
  const s = await api.createStream('cr', '(i int, v string)');
  const t = await api.createStream('ct', '(i int, v string)');
  const u = await api.createStream('cu', '(i int, v string)');
  for (const sql of [
    // Three sides.
    `SELECT a.v FROM changelog(${s}, i) AS a JOIN changelog(${t}, i) AS b ON a.i = b.i AND lag_behind(1ms, a._tp_time, b._tp_time) JOIN changelog(${u}, i) AS c ON a.i = c.i`,
    // Three sides LEFT JOINed.
    `SELECT a.v FROM changelog(${s}, i) AS a LEFT JOIN changelog(${t}, i) AS b ON a.i = b.i AND lag_behind(1ms, a._tp_time, b._tp_time) LEFT JOIN changelog(${u}, i) AS c ON a.i = c.i`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.code, 48, `${sql}: ${e.message}`);
    assert.match(e.message, /Join alignment \(lag_behind\).*with changelog inputs/);
  }
  // Both time columns of one side.
  const e = await api.startError(
    `SELECT a.v, b.v FROM changelog(${s}, i) AS a JOIN changelog(${t}, i) AS b ON a.i = b.i AND lag_behind(1ms, a._tp_time, a._tp_time)`,
  );
  assert.equal(e.code, 48, e.message);
  assert.match(e.message, /one time column of each side/);
});
