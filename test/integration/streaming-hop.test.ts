/**
 * Hop (sliding) windows through the REST API: the default emit and late rows, and ON UPDATE.
 * Semantics: streaming-sql-notes.md §1.5 (an event belongs to size/slide windows), §1.7 (the hop
 * watermark is the last window end on the slide grid at or before the max event time; a row below
 * the watermark in force before its batch is late, even when some window it belongs to is open).
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

const stream = (): Promise<string> => api.createStream('hop', "(v int32, ts datetime64(3, 'UTC'))", 'ts');

function batch(name: string, rows: [number, string][]): Promise<void> {
  return api.ingest(
    name,
    ['v', 'ts'],
    rows.map(([v, t]) => [v, `2024-01-24 ${t}`]),
  );
}

const at = (t: string) => `2024-01-24 ${t}.000`;

test('hop default emit: each window once when the watermark passes its end; a row below the watermark is dropped', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, count() AS c, sum(v) AS total FROM hop(${s}, ts, 5s, 10s) GROUP BY window_start, window_end`,
  );
  // slide 5s, size 10s: an event at t is in [floor5(t) - 5s, +10s) and [floor5(t), +10s).
  // Batch 1: 10:00:01 (v=1) -> [09:59:55, 10:00:05), [10:00:00, 10:00:10). Watermark 10:00:00.
  await batch(s, [[1, '10:00:01']]);
  await q.waitForScanned(1);
  assert.deepEqual(q.rows, []);
  // Batch 2: 10:00:06 (v=2) -> [10:00:00, 10:00:10), [10:00:05, 10:00:15). Watermark: the last
  // window end on the 5s grid <= 10:00:06 = 10:00:05 -> [09:59:55, 10:00:05) closes: 1 row, sum 1.
  await batch(s, [[2, '10:00:06']]);
  await q.waitForRows(1);
  // Batch 3: 10:00:12 (v=4) -> [10:00:05, 10:00:15), [10:00:10, 10:00:20). Watermark 10:00:10 ->
  // [10:00:00, 10:00:10) closes: 01, 06 -> count 2, sum 3.
  await batch(s, [[4, '10:00:12']]);
  await q.waitForRows(2);
  // Batch 4: 10:00:07 (v=8) is below the watermark 10:00:10: late and dropped, although its window
  // [10:00:05, 10:00:15) is still open. 10:00:13 (v=16) -> [10:00:05, 10:00:15), [10:00:10, 10:00:20).
  await batch(s, [
    [8, '10:00:07'],
    [16, '10:00:13'],
  ]);
  await q.waitForScanned(5);
  assert.equal(q.rows.length, 2);
  // Batch 5: 10:00:21 (v=32): watermark 10:00:20 closes [10:00:05, 10:00:15) (06, 12, 13: count 3,
  // sum 22) and [10:00:10, 10:00:20) (12, 13: count 2, sum 20).
  await batch(s, [[32, '10:00:21']]);
  await q.waitForRows(4);
  const rows = await q.waitForQuiet(500);
  assert.deepEqual(rows.slice(0, 2), [
    [at('09:59:55'), at('10:00:05'), 1, 1],
    [at('10:00:00'), at('10:00:10'), 2, 3],
  ]);
  assert.deepEqual(
    rows.slice(2).sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    [
      [at('10:00:05'), at('10:00:15'), 3, 22],
      [at('10:00:10'), at('10:00:20'), 2, 20],
    ],
  );
  await q.cancel();
});

test('hop EMIT ON UPDATE: the updated windows per batch; a window closed without update is not emitted again (0034 id 1)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, min(v), max(v), count() FROM hop(${s}, 10s, 30s) GROUP BY window_start, window_end EMIT ON UPDATE`,
  );
  // hop(10s, 30s): 10:00:00 is in [09:59:40, +30s), [09:59:50, +30s), [10:00:00, +30s).
  await batch(s, [[1, '10:00:00']]);
  await q.waitForRows(3);
  // 10:00:05: the same three windows, each now min 1, max 2, count 2.
  await batch(s, [[2, '10:00:05']]);
  await q.waitForRows(6);
  // 10:00:10: in [09:59:50, ..), [10:00:00, ..), [10:00:10, ..); the watermark 10:00:10 closes
  // [09:59:40, 10:00:10), which this batch did not update: not emitted.
  await batch(s, [[3, '10:00:10']]);
  await q.waitForRows(9);
  const rows = await q.waitForQuiet(500);
  const w = (a: string, b: string) => [at(a), at(b)];
  const sort = (r: unknown[][]) => [...r].sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  assert.deepEqual(sort(rows.slice(0, 3)), [
    [...w('09:59:40', '10:00:10'), 1, 1, 1],
    [...w('09:59:50', '10:00:20'), 1, 1, 1],
    [...w('10:00:00', '10:00:30'), 1, 1, 1],
  ]);
  assert.deepEqual(sort(rows.slice(3, 6)), [
    [...w('09:59:40', '10:00:10'), 1, 2, 2],
    [...w('09:59:50', '10:00:20'), 1, 2, 2],
    [...w('10:00:00', '10:00:30'), 1, 2, 2],
  ]);
  assert.deepEqual(sort(rows.slice(6)), [
    [...w('09:59:50', '10:00:20'), 1, 3, 3],
    [...w('10:00:00', '10:00:30'), 1, 3, 3],
    [...w('10:00:10', '10:00:40'), 3, 3, 1],
  ]);
  await q.cancel();
});
