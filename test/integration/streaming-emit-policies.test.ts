/**
 * EMIT policies through the REST API: PERIODIC, ON UPDATE, PERIODIC ... ON UPDATE and CHANGELOG for
 * global aggregations, and ON UPDATE / PERIODIC / PERIODIC ON UPDATE for a tumble window, with the
 * refused combinations. Semantics: streaming-sql-notes.md §1.6, with the expected rows of the
 * Proton smoke suite 0034_emit_mode.yaml (ids 1-3) and 0029_emit_changelog.yaml (id 0) where they
 * apply. Stream: `(i int)`, each insert one batch with an explicit `_tp_time`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi, type StreamingQuery } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

const stream = (): Promise<string> => api.createStream('emit', '(i int32, k string)');

const W1 = ['2024-01-24 10:00:00.000', '2024-01-24 10:00:10.000'];
const W2 = ['2024-01-24 10:00:10.000', '2024-01-24 10:00:20.000'];

/** Insert one batch: rows of (i, k, time-of-day on 2024-01-24). */
async function insert(name: string, rows: [number, string, string][]): Promise<void> {
  const values = rows.map(([i, k, t]) => `(${i}, '${k}', '2024-01-24 ${t}')`).join(', ');
  await api.exec(`INSERT INTO ${name} (i, k, _tp_time) VALUES ${values}`);
}

/** The three inserts of 0034_emit_mode.yaml, each waiting for `q` to have `after[j]` rows. */
async function emitModeInserts(name: string, q: StreamingQuery, after: number[]): Promise<void> {
  const inserts: [number, string][] = [
    [1, '10:00:00'],
    [2, '10:00:05'],
    [3, '10:00:10'],
  ];
  for (const [j, [i, t]] of inserts.entries()) {
    await insert(name, [[i, 'x', t]]);
    await q.waitForRows(after[j] as number);
  }
}

// --- global aggregation ---

test('global EMIT PERIODIC 1s: the full result (all groups) per tick; no tick without new data', async () => {
  const s = await stream();
  const q = await api.start(`SELECT k, count() AS c, max(i) AS m FROM ${s} GROUP BY k EMIT PERIODIC 1s`);
  await insert(s, [
    [1, 'a', '10:00:00'],
    [5, 'b', '10:00:00'],
    [3, 'a', '10:00:00'],
  ]);
  await q.waitForRows(2);
  // a: count 2, max 3; b: count 1, max 5.
  assertSameRows(q.rows, [
    ['a', 2, 3],
    ['b', 1, 5],
  ]);
  assert.equal((await q.waitForQuiet(2_200)).length, 2, 'no new data: ticks are skipped');
  await insert(s, [[10, 'a', '10:00:01']]);
  await q.waitForRows(4);
  // Only a changed, but a periodic emit sends every group: a 3/10 and b 1/5 again.
  assertSameRows(q.rows.slice(2), [
    ['a', 3, 10],
    ['b', 1, 5],
  ]);
  await q.cancel();
});

test('global EMIT ON UPDATE: per batch, only the groups that changed (0034 id 1)', async () => {
  const s = await stream();
  const all = await api.start(`SELECT min(i), max(i), count() FROM ${s} EMIT ON UPDATE`);
  const byI = await api.start(`SELECT i, count() FROM ${s} GROUP BY i EMIT ON UPDATE`);
  const byK = await api.start(`SELECT k, count() AS c, sum(i) AS total FROM ${s} GROUP BY k EMIT ON UPDATE`);
  await insert(s, [[1, 'a', '10:00:00']]);
  await all.waitForRows(1);
  await byI.waitForRows(1);
  await byK.waitForRows(1);
  await insert(s, [[2, 'b', '10:00:05']]);
  await all.waitForRows(2);
  await byI.waitForRows(2);
  await byK.waitForRows(2);
  await insert(s, [
    [3, 'a', '10:00:10'],
    [4, 'c', '10:00:10'],
  ]);
  await all.waitForRows(3);
  await byI.waitForRows(4);
  await byK.waitForRows(4);
  // Ungrouped: one row per batch, the running min/max/count: (1,1,1), (1,2,2), (1,4,4).
  assert.deepEqual(all.rows, [
    [1, 1, 1],
    [1, 2, 2],
    [1, 4, 4],
  ]);
  // By i: each batch adds new values of i only: 1; 2; 3 and 4.
  assert.deepEqual(byI.rows.slice(0, 2), [
    [1, 1],
    [2, 1],
  ]);
  assertSameRows(byI.rows.slice(2), [
    [3, 1],
    [4, 1],
  ]);
  // By k: batch 1 a(1); batch 2 b(2); batch 3 touches a (count 2, sum 1+3) and c (4), not b.
  assert.deepEqual(byK.rows.slice(0, 2), [
    ['a', 1, 1],
    ['b', 1, 2],
  ]);
  assertSameRows(byK.rows.slice(2), [
    ['a', 2, 4],
    ['c', 1, 4],
  ]);
  await byK.waitForQuiet(500);
  assert.equal(byK.rows.length, 4, 'b is never emitted again');
  for (const q of [all, byI, byK]) await q.cancel();
});

test('global EMIT PERIODIC 1s ON UPDATE: changed groups only, checked at each tick (0034 id 3)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT k, count() AS c, sum(i) AS total FROM ${s} GROUP BY k EMIT PERIODIC 1s ON UPDATE`,
  );
  await insert(s, [
    [1, 'a', '10:00:00'],
    [2, 'b', '10:00:00'],
  ]);
  await q.waitForRows(2);
  assertSameRows(q.rows, [
    ['a', 1, 1],
    ['b', 1, 2],
  ]);
  assert.equal((await q.waitForQuiet(2_200)).length, 2, 'no changes: nothing emitted');
  await insert(s, [[3, 'a', '10:00:01']]);
  await q.waitForRows(3);
  // Only a changed: a count 2, sum 1 + 3 = 4; b is not repeated.
  assert.deepEqual(await q.waitForQuiet(1_500), [...q.rows.slice(0, 2), ['a', 2, 4]]);
  await q.cancel();
});

test('EMIT CHANGELOG PERIODIC 1s: the first emit +1, then -1 of the old and +1 of the new value (0029 id 0)', async () => {
  const s = await stream();
  const q = await api.start(`SELECT count(), _tp_delta FROM ${s} EMIT CHANGELOG PERIODIC 1s`);
  assert.deepEqual(q.header, ['count()', '_tp_delta']);
  await insert(s, [[1, 'k1', '10:00:00']]);
  await q.waitForRows(1);
  await insert(s, [[1, 'k2', '10:00:01']]);
  await q.waitForRows(3);
  // count 1 (+1); then count 2: retract (1, -1), add (2, +1).
  assert.deepEqual(q.rows, [
    [1, 1],
    [1, -1],
    [2, 1],
  ]);
  await q.cancel();
});

test('EMIT CHANGELOG with GROUP BY: only changed groups retract and re-add; unchanged groups stay silent', async () => {
  // §1.6: "On each emit, every changed key emits (old, -1) then (new, +1)"; Proton converts only
  // changed groups (AggregatingHelper::convertToChangelogChunk, ConvertType::Updates).
  const s = await stream();
  const q = await api.start(
    `SELECT k, count() AS c, _tp_delta FROM ${s} GROUP BY k EMIT CHANGELOG PERIODIC 1s`,
  );
  await insert(s, [
    [1, 'a', '10:00:00'],
    [1, 'b', '10:00:00'],
  ]);
  await q.waitForRows(2);
  assertSameRows(q.rows, [
    ['a', 1, 1],
    ['b', 1, 1],
  ]);
  await insert(s, [[1, 'a', '10:00:01']]);
  await q.waitForRows(4);
  // a: 1 -> 2, so (a, 1, -1) and (a, 2, +1); b did not change: nothing for b.
  const rows = await q.waitForQuiet(1_500);
  assertSameRows(rows.slice(2), [
    ['a', 1, -1],
    ['a', 2, 1],
  ]);
  assert.equal(rows.length, 4);
  await q.cancel();
});

test('EMIT CHANGELOG refuses emit_version()', async () => {
  const s = await stream();
  // §1.6 / §1.11: emit_version() is not allowed with EMIT CHANGELOG (Proton: UNSUPPORTED).
  const r = await api.post('/v1beta2/queries', {
    sql: `SELECT count(), emit_version() FROM ${s} EMIT CHANGELOG PERIODIC 1s`,
  });
  const ct = String(r.headers.get('content-type'));
  await r.body?.cancel();
  assert.ok(
    r.status >= 400 && !ct.startsWith('text/event-stream'),
    `expected an error, got ${r.status} ${ct}`,
  );
});

// --- tumble window ---

test('tumble EMIT ON UPDATE: changed groups of open windows per batch; a closed window is not emitted again (0034 id 1)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, min(i), max(i), count() FROM tumble(${s}, 10s) GROUP BY window_start, window_end EMIT ON UPDATE`,
  );
  const byI = await api.start(
    `SELECT window_start, window_end, i, count() FROM tumble(${s}, 10s) GROUP BY window_start, window_end, i EMIT ON UPDATE`,
  );
  // i=1 @10:00:00 -> W1 (1,1,1); i=2 @10:00:05 -> W1 (1,2,2); i=3 @10:00:10 -> W2 (3,3,1), and the
  // watermark (10:00:10) closes W1, which had no update in that batch: not emitted again.
  await emitModeInserts(s, q, [1, 2, 3]);
  await byI.waitForRows(3);
  assert.deepEqual(await q.waitForQuiet(500), [
    [...W1, 1, 1, 1],
    [...W1, 1, 2, 2],
    [...W2, 3, 3, 1],
  ]);
  assert.deepEqual(await byI.waitForQuiet(500), [
    [...W1, 1, 1],
    [...W1, 2, 1],
    [...W2, 3, 1],
  ]);
  await q.cancel();
  await byI.cancel();
});

test('tumble EMIT PERIODIC 1s: open windows per tick with new data, the final result again at close (0034 id 2)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, min(i), max(i), count() FROM tumble(${s}, 10s) GROUP BY window_start, window_end EMIT PERIODIC 1s`,
  );
  await insert(s, [[1, 'x', '10:00:00']]);
  await q.waitForRows(1);
  // No new data: no tick emits.
  assert.equal((await q.waitForQuiet(2_200)).length, 1);
  await insert(s, [[2, 'x', '10:00:05']]);
  await q.waitForRows(2);
  await insert(s, [[3, 'x', '10:00:10']]);
  await q.waitForRows(4);
  // Tick 1: W1 (1,1,1). Tick 2: W1 (1,2,2). Tick 3 (after the 10:00:10 row closed W1): W1's final
  // (1,2,2) and W2's intermediate (3,3,1).
  const rows = await q.waitForQuiet(1_500);
  assert.deepEqual(rows.slice(0, 2), [
    [...W1, 1, 1, 1],
    [...W1, 1, 2, 2],
  ]);
  assertSameRows(rows.slice(2), [
    [...W1, 1, 2, 2],
    [...W2, 3, 3, 1],
  ]);
  await q.cancel();
});

test('tumble EMIT PERIODIC 1s ON UPDATE: only windows/groups updated since the last tick (0034 id 3)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, min(i), max(i), count() FROM tumble(${s}, 10s) GROUP BY window_start, window_end EMIT PERIODIC 1s ON UPDATE`,
  );
  await emitModeInserts(s, q, [1, 2, 3]);
  // Same rows as ON UPDATE: W1 (1,1,1), W1 (1,2,2), W2 (3,3,1); W1 had no update in the last tick.
  assert.deepEqual(await q.waitForQuiet(1_500), [
    [...W1, 1, 1, 1],
    [...W1, 1, 2, 2],
    [...W2, 3, 3, 1],
  ]);
  await q.cancel();
});

test('window emit refuses PERIODIC with DELAY or TIMEOUT', async () => {
  const s = await stream();
  // §1.6: "PERIODIC cannot be combined with DELAY or TIMEOUT" (INCORRECT_QUERY, 80).
  for (const emit of [
    'EMIT AFTER WATERMARK WITH DELAY 1s AND PERIODIC 1s',
    'EMIT PERIODIC 1s AND TIMEOUT 1s',
  ]) {
    const e = await api.startError(
      `SELECT window_start, count() FROM tumble(${s}, 10s) GROUP BY window_start ${emit}`,
    );
    assert.equal(e.code, 80, `${emit}: ${JSON.stringify(e)}`);
  }
});
