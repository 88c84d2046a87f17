/**
 * dedup(s, keys...[, ttl][, limit]) in streaming queries: the first row per key passes, across
 * batches; at most `limit` keys are kept (oldest dropped first, at the start of a step); keys
 * expire `ttl` after they were admitted; a window over dedup() counts first rows only.
 * Semantics: streaming-sql-notes.md §1.12 and Proton's DedupTransform.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';
import { rows as engineRows } from '../helpers/streams.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

const stream = (): Promise<string> =>
  api.createStream('dedup', "(i int32, s string, ts datetime64(3, 'UTC'))", 'ts');

function batch(name: string, rows: [number, string, string?][]): Promise<void> {
  return api.ingest(
    name,
    ['i', 's', 'ts'],
    rows.map(([i, s, t]) => [i, s, `2024-01-24 ${t ?? '10:00:00'}`]),
  );
}

async function keyTables(): Promise<number> {
  const [[count]] = (await engineRows(
    api.h,
    "SELECT count() FROM system.tables WHERE database = '_tributary_state' AND name LIKE 'dd\\\\_%'",
  )) as [[string]];
  return Number(count);
}

test('dedup: a key seen in an earlier batch does not pass again; the key table goes with the query', async () => {
  const s = await stream();
  const q = await api.start(`SELECT i, s FROM dedup(${s}, s)`);
  await batch(s, [
    [1, 's1'],
    [2, 's2'],
    [3, 's1'],
  ]);
  await q.waitForRows(2);
  await q.waitForScanned(3);
  await batch(s, [
    [4, 's2'],
    [5, 's3'],
    [6, 's1'],
  ]);
  await q.waitForRows(3);
  await q.waitForQuiet(300);
  assert.deepEqual(q.rows, [
    [1, 's1'],
    [2, 's2'],
    [5, 's3'],
  ]);
  assert.ok((await keyTables()) >= 1);
  await q.cancel();
  assert.equal(await keyTables(), 0, 'the key table is dropped when the query ends');
});

test('dedup: with a limit, the oldest keys are dropped first and their rows pass again', async () => {
  const s = await stream();
  const q = await api.start(`SELECT i, s FROM dedup(${s}, s, 0s, 2)`);
  await batch(s, [
    [1, 's1'],
    [2, 's2'],
    [3, 's3'],
  ]);
  await q.waitForRows(3);
  await q.waitForScanned(3);
  // Keys kept at the start of this batch: s2, s3 (s1, the oldest, went past the limit of 2).
  await batch(s, [
    [2, 's2'],
    [3, 's3'],
    [1, 's1'],
  ]);
  await q.waitForRows(4);
  await q.waitForQuiet(300);
  assert.deepEqual(q.rows, [
    [1, 's1'],
    [2, 's2'],
    [3, 's3'],
    [1, 's1'],
  ]);
  await q.cancel();
});

test('dedup: keys expire once their TTL has passed', async () => {
  const s = await stream();
  const q = await api.start(`SELECT i, s FROM dedup(${s}, s, 2s)`);
  await batch(s, [[1, 'k']]);
  await q.waitForRows(1);
  await batch(s, [[2, 'k']]); // within the TTL: a duplicate
  await q.waitForScanned(2);
  await new Promise((r) => setTimeout(r, 2500));
  await batch(s, [[3, 'k']]); // the key expired: passes again
  await q.waitForRows(2);
  await q.waitForQuiet(300);
  assert.deepEqual(q.rows, [
    [1, 'k'],
    [3, 'k'],
  ]);
  await q.cancel();
});

test('dedup under a tumble window: each window counts first rows per key only', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, count() AS c, group_array(i) AS ids FROM tumble(dedup(${s}, s), ts, 5s) GROUP BY window_start`,
  );
  await batch(s, [
    [1, 'a', '10:00:01'],
    [2, 'b', '10:00:02'],
    [3, 'a', '10:00:03'],
  ]);
  await q.waitForScanned(3);
  await batch(s, [
    [4, 'b', '10:00:04'],
    [5, 'c', '10:00:06'],
    [6, 'a', '10:00:11'],
    [7, 'd', '10:00:12'],
  ]);
  await q.waitForRows(2);
  await q.waitForQuiet(300);
  assertSameRows(q.rows, [
    ['2024-01-24 10:00:00.000', 2, [1, 2]],
    ['2024-01-24 10:00:05.000', 1, [5]],
  ]);
  await q.cancel();
});
