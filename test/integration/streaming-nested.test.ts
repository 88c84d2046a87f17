/**
 * Streaming queries over CTEs, subqueries and views, and aggregations over aggregations (window over
 * window, global over window, tail over window), through the REST API.
 * Semantics: streaming-sql-notes.md §1.5 ("Window-over-window: two levels at most ... Global-over-
 * window is allowed"), §1.8 (a view over a stream is streaming), and the Proton smoke suite
 * 0000_smoke_case.json ids 30, 33 and 34.
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

const stream = (): Promise<string> =>
  api.createStream('nested', "(id string, v int32, ts datetime64(3, 'UTC'))", 'ts');

function batch(name: string, rows: [string, number, string][]): Promise<void> {
  return api.ingest(
    name,
    ['id', 'v', 'ts'],
    rows.map(([id, v, t]) => [id, v, `2024-01-24 ${t}`]),
  );
}

const at = (t: string) => `2024-01-24 ${t}.000`;

test('a CTE, a subquery and a view over a stream stream like the stream itself', async () => {
  const s = await stream();
  await api.exec(`CREATE VIEW ${s}_view AS SELECT id, v FROM ${s} WHERE v > 1`);
  const cte = await api.start(
    `WITH doubled AS (SELECT id, v * 2 AS dv FROM ${s} WHERE v > 0) SELECT id, dv FROM doubled WHERE dv < 10`,
  );
  const sub = await api.start(`SELECT x FROM (SELECT v + 1 AS x FROM ${s}) WHERE x > 2`);
  const view = await api.start(`SELECT id, v FROM ${s}_view`);
  await batch(s, [
    ['a', 1, '10:00:00'],
    ['b', 2, '10:00:01'],
    ['c', 7, '10:00:02'],
    ['d', -1, '10:00:03'],
  ]);
  // CTE: v > 0 -> a 2, b 4, c 14; dv < 10 -> a 2, b 4.
  // Subquery: x = v + 1 -> 2, 3, 8, 0; x > 2 -> 3, 8.
  // View: v > 1 -> b 2, c 7.
  await cte.waitForRows(2);
  await sub.waitForRows(2);
  await view.waitForRows(2);
  assert.deepEqual(cte.rows, [
    ['a', 2],
    ['b', 4],
  ]);
  assert.deepEqual(sub.rows, [[3], [8]]);
  assert.deepEqual(view.rows, [
    ['b', 2],
    ['c', 7],
  ]);
  for (const q of [cte, sub, view]) await q.cancel();
});

test('a window and a global aggregation over a CTE', async () => {
  const s = await stream();
  // 0000 id 30: the window's time column is computed in the CTE.
  const win = await api.start(
    `WITH shifted AS (SELECT id, v, ts + INTERVAL 1 MINUTE AS t2 FROM ${s}) SELECT id, max(v) AS m, window_start FROM tumble(shifted, t2, 5s) GROUP BY id, window_start`,
  );
  const glob = await api.start(
    `WITH pos AS (SELECT id, v FROM ${s} WHERE v > 0) SELECT id, sum(v) AS total FROM pos GROUP BY id EMIT ON UPDATE`,
  );
  await batch(s, [
    ['a', 1, '10:00:00'],
    ['b', 5, '10:00:01'],
    ['a', 3, '10:00:04'],
    ['b', -2, '10:00:02'],
  ]);
  await glob.waitForRows(2);
  // ON UPDATE over v > 0: a 1 + 3 = 4, b 5.
  assertSameRows(glob.rows, [
    ['a', 4],
    ['b', 5],
  ]);
  // t2 = ts + 1 min; 10:01:05 closes [10:01:00, 10:01:05): a max 3, b max 5 (the -2 row counts for max too).
  await batch(s, [['c', 9, '10:00:05']]);
  await win.waitForRows(2);
  assertSameRows(await win.waitForQuiet(400), [
    ['a', 3, at('10:01:00')],
    ['b', 5, at('10:01:00')],
  ]);
  await glob.waitForRows(3);
  assert.deepEqual(glob.rows[2], ['c', 9]);
  for (const q of [win, glob]) await q.cancel();
});

test('a tail over a tumble subquery sees each window once it closes (0000 id 33)', async () => {
  const s = await stream();
  const q = await api.start(
    `WITH w AS (SELECT id, count() AS c, window_end AS we FROM tumble(${s}, ts, 2s) GROUP BY id, window_end) SELECT id, c, we FROM w WHERE c > 0`,
  );
  await batch(s, [
    ['a', 1, '10:00:00'],
    ['a', 1, '10:00:01'],
    ['b', 1, '10:00:01'],
  ]);
  // 10:00:02 closes [10:00:00, 10:00:02): a 2, b 1. (Whether the two batches are read as one or two
  // steps does not change this.)
  await batch(s, [['a', 1, '10:00:02']]);
  await q.waitForRows(2);
  assertSameRows(await q.waitForQuiet(400), [
    ['a', 2, at('10:00:02')],
    ['b', 1, at('10:00:02')],
  ]);
  await q.cancel();
});

test('window over window: a tumble over a tumble CTE (0000 id 34)', async () => {
  const s = await stream();
  const q = await api.start(
    `WITH inner_w AS (SELECT id, count() AS c, window_end AS we FROM tumble(${s}, ts, 2s) GROUP BY id, window_end) SELECT sum(c) AS total, window_start, window_end FROM tumble(inner_w, we, 10s) GROUP BY window_start, window_end`,
  );
  // Inner (2s windows over ts): batch 1 (a@00, b@01, a@03) -> watermark 10:00:02 closes [00, 02):
  // (a, 1, we 02), (b, 1, we 02). The outer (10s windows over we) sees we = 10:00:02: its
  // watermark is 10:00:00, nothing closes.
  await batch(s, [
    ['a', 1, '10:00:00'],
    ['b', 1, '10:00:01'],
    ['a', 1, '10:00:03'],
  ]);
  // Batch 2 (a@09, a@10) -> inner watermark 10:00:10 closes [02, 04) (a, 1, we 04) and [08, 10)
  // (a, 1, we 10). The outer sees we 04 (outer W1) and we 10 (outer W2 [10:00:10, 10:00:20));
  // its watermark becomes 10:00:10 and closes W1 [10:00:00, 10:00:10): 1 + 1 + 1 = 3. (Were both
  // batches read in one step, the inner would emit all three windows at once: the same result.)
  await batch(s, [
    ['a', 1, '10:00:09'],
    ['a', 1, '10:00:10'],
  ]);
  await q.waitForRows(1);
  assert.deepEqual(await q.waitForQuiet(400), [[3, at('10:00:00'), at('10:00:10')]]);
  await q.cancel();
});

test('global over window: a global aggregation of closed windows', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT count() AS windows, sum(c) AS events FROM (SELECT window_start, count() AS c FROM tumble(${s}, ts, 10s) GROUP BY window_start) EMIT PERIODIC 1s`,
  );
  // 10:00:12 closes [10:00:00, 10:00:10) with 2 rows: the global result becomes 1 window, 2 events.
  await batch(s, [
    ['a', 1, '10:00:01'],
    ['a', 1, '10:00:05'],
    ['a', 1, '10:00:12'],
  ]);
  await q.waitForRows(1);
  // 10:00:25 closes [10:00:10, 10:00:20) with 1 row: 2 windows, 3 events.
  await batch(s, [['a', 1, '10:00:25']]);
  await q.waitForRows(2);
  assert.deepEqual(await q.waitForQuiet(1_500), [
    [1, 2],
    [2, 3],
  ]);
  await q.cancel();
});
