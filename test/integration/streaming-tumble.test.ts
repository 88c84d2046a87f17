/**
 * Tumble windows through the REST API: the default emit (a window closes when the watermark passes
 * its end), out-of-order rows inside an open window, late rows, WITH DELAY, TIMEOUT, PARTITION BY
 * substreams with independent watermarks, and LIMIT BY window_start.
 *
 * Watermark rules (streaming-sql-notes.md §1.7): per batch, a row is late (dropped) when its event
 * time is below the watermark in force BEFORE the batch; after the batch the watermark becomes
 * floor(max event time - delay, window size); windows with window_end <= watermark are emitted once.
 * Inserts that must be separate batches wait until the executor has read the previous one
 * (`waitForScanned`, the metrics event's scanned_rows).
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
  api.createStream('tumble', "(id string, v int32, ts datetime64(3, 'UTC'))", 'ts');

/** One batch of (id, v, time of day on 2024-01-24) rows through the compact ingest endpoint. */
function batch(name: string, rows: [string, number, string][]): Promise<void> {
  return api.ingest(
    name,
    ['id', 'v', 'ts'],
    rows.map(([id, v, t]) => [id, v, `2024-01-24 ${t}`]),
  );
}

const at = (t: string) => `2024-01-24 ${t}.000`;

test('default emit: a window is emitted once, when an event at or past its end arrives; out-of-order rows count, late rows are dropped', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, count() AS c, sum(v) AS total FROM tumble(${s}, ts, INTERVAL 10 SECOND) GROUP BY window_start, window_end`,
  );
  // Batch 1: 10:00:01 (v=1), 10:00:05 (v=2). Watermark -> floor(10:00:05, 10s) = 10:00:00: nothing closes.
  await batch(s, [
    ['a', 1, '10:00:01'],
    ['a', 2, '10:00:05'],
  ]);
  await q.waitForScanned(2);
  assert.deepEqual(q.rows, []);
  // Batch 2: 10:00:12 (v=8) then 10:00:03 (v=4). 10:00:03 is older than the max seen, but the
  // watermark in force before this batch is 10:00:00, so it is not late: W1 gets it. After the
  // batch the watermark is floor(10:00:12) = 10:00:10 and W1 [10:00:00, 10:00:10) closes:
  // count 3 (01, 05, 03), sum 1 + 2 + 4 = 7.
  await batch(s, [
    ['a', 8, '10:00:12'],
    ['a', 4, '10:00:03'],
  ]);
  await q.waitForRows(1);
  // Batch 3: 10:00:09 (v=16) is below the watermark 10:00:10: late, dropped (W1 is not emitted
  // again). 10:00:15 (v=32) goes to W2. The watermark stays 10:00:10.
  await batch(s, [
    ['a', 16, '10:00:09'],
    ['a', 32, '10:00:15'],
  ]);
  await q.waitForScanned(6);
  assert.equal(q.rows.length, 1);
  // Batch 4: an event exactly at W2's end, 10:00:20 (v=64): watermark 10:00:20 closes W2
  // [10:00:10, 10:00:20): count 2 (12, 15), sum 8 + 32 = 40. 10:00:20 itself opens W3 (never closed).
  await batch(s, [['a', 64, '10:00:20']]);
  await q.waitForRows(2);
  assert.deepEqual(await q.waitForQuiet(500), [
    [at('10:00:00'), at('10:00:10'), 3, 7],
    [at('10:00:10'), at('10:00:20'), 2, 40],
  ]);
  await q.cancel();
});

test('default emit with GROUP BY a key: every group of the closed window (0000_smoke_case id 0)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT id, v, window_start, window_end FROM tumble(${s}, ts, 5s) GROUP BY id, v, window_start, window_end`,
  );
  await batch(s, [
    ['dev1', 57, '20:00:00'],
    ['dev2', 58, '20:00:03'],
    ['dev6', 66, '20:00:04'],
  ]);
  await q.waitForScanned(3);
  assert.deepEqual(q.rows, [], 'nothing before the watermark passes 20:00:05');
  // 20:00:10 -> watermark 20:00:10: [20:00:00, 20:00:05) closes with its three groups; the empty
  // window [20:00:05, 20:00:10) emits nothing; [20:00:10, ...) stays open.
  await batch(s, [['dev8', 67, '20:00:10']]);
  await q.waitForRows(3);
  const rows = await q.waitForQuiet(500);
  assert.deepEqual(
    [...rows].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    [
      ['dev1', 57, at('20:00:00'), at('20:00:05')],
      ['dev2', 58, at('20:00:00'), at('20:00:05')],
      ['dev6', 66, at('20:00:00'), at('20:00:05')],
    ],
  );
  await q.cancel();
});

test('EMIT AFTER WATERMARK WITH DELAY: the watermark trails the max event time by the delay', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, count() AS c, sum(v) AS total FROM tumble(${s}, ts, 10s) GROUP BY window_start EMIT STREAM AFTER WATERMARK WITH DELAY INTERVAL 3 SECOND`,
  );
  // Batch 1: 10:00:01 (1), 10:00:11 (2). Watermark = floor(10:00:11 - 3s = 10:00:08) = 10:00:00:
  // W1 stays open (without the delay it would close now).
  await batch(s, [
    ['a', 1, '10:00:01'],
    ['a', 2, '10:00:11'],
  ]);
  await q.waitForScanned(2);
  // Batch 2: 10:00:08 (4) is not late (watermark 10:00:00): W1 counts it.
  await batch(s, [['a', 4, '10:00:08']]);
  await q.waitForScanned(3);
  assert.deepEqual(q.rows, []);
  // Batch 3: 10:00:13 (8): watermark floor(10:00:10) = 10:00:10 closes W1: count 2 (01, 08), sum 5.
  await batch(s, [['a', 8, '10:00:13']]);
  await q.waitForRows(1);
  // Batch 4: 10:00:09 (16) is late (< 10:00:10); 10:00:23 (32): watermark floor(10:00:20) closes
  // W2 [10:00:10, 10:00:20): 11, 13 -> count 2, sum 10.
  await batch(s, [
    ['a', 16, '10:00:09'],
    ['a', 32, '10:00:23'],
  ]);
  await q.waitForRows(2);
  assert.deepEqual(await q.waitForQuiet(500), [
    [at('10:00:00'), 2, 5],
    [at('10:00:10'), 2, 10],
  ]);
  await q.cancel();
});

test('EMIT ... AND TIMEOUT: with no new rows for the timeout, every open window is emitted', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, window_end, count() AS c FROM tumble(${s}, ts, 10s) GROUP BY window_start, window_end EMIT AFTER WATERMARK AND TIMEOUT 1s`,
  );
  // No events at all: nothing is ever emitted, whatever the timeout.
  assert.deepEqual(await q.waitForQuiet(1_500), []);
  // 10:00:01 and 10:00:02 never move the watermark past 10:00:10; after 1 s without rows the
  // timeout sets watermark = max event time + 1 and closes W1: count 2.
  await batch(s, [
    ['a', 1, '10:00:01'],
    ['b', 1, '10:00:02'],
  ]);
  await q.waitForRows(1);
  // A later row opens W3 [10:00:20, 10:00:30); the next timeout closes it: count 1. W1 is not repeated.
  await batch(s, [['a', 1, '10:00:25']]);
  await q.waitForRows(2);
  assert.deepEqual(await q.waitForQuiet(1_500), [
    [at('10:00:00'), at('10:00:10'), 2],
    [at('10:00:20'), at('10:00:30'), 1],
  ]);
  await q.cancel();
});

test('PARTITION BY: each substream has its own watermark; its windows close on its own events', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT id, window_start, count() AS c FROM tumble(${s}, ts, 10s) PARTITION BY id GROUP BY window_start`,
  );
  // Batch 1: a@01, b@02. Watermarks: a 10:00:00, b 10:00:00.
  await batch(s, [
    ['a', 1, '10:00:01'],
    ['b', 1, '10:00:02'],
  ]);
  await q.waitForScanned(2);
  // Batch 2: a@15 moves only a's watermark to 10:00:10: a's W1 closes (count 1); b's W1 stays open.
  await batch(s, [['a', 1, '10:00:15']]);
  await q.waitForRows(1);
  // Batch 3: b@03 is not late for b (its watermark is 10:00:00; one shared watermark would drop
  // it); a@04 is late for a (10:00:10) and dropped; a@11 goes to a's W2.
  await batch(s, [
    ['b', 1, '10:00:03'],
    ['a', 1, '10:00:04'],
    ['a', 1, '10:00:11'],
  ]);
  await q.waitForScanned(6);
  assert.equal(q.rows.length, 1, JSON.stringify(q.rows));
  // Batch 4: b@12 closes b's W1 (02, 03 -> 2); a@21 closes a's W2 (15, 11 -> 2).
  await batch(s, [
    ['b', 1, '10:00:12'],
    ['a', 1, '10:00:21'],
  ]);
  await q.waitForRows(3);
  const rows = await q.waitForQuiet(500);
  assert.deepEqual(rows[0], ['a', at('10:00:00'), 1]);
  assert.deepEqual(
    rows.slice(1).sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    [
      ['a', at('10:00:10'), 2],
      ['b', at('10:00:00'), 2],
    ],
  );
  await q.cancel();
});

test('ORDER BY ... LIMIT n BY window_start: top n per closed window (0019_limit_by id 1)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT id, count() AS c, sum(v) AS total FROM tumble(${s}, ts, 2s) GROUP BY window_start, id ORDER BY total DESC LIMIT 2 BY window_start`,
  );
  await batch(s, [
    ['s1', 1, '00:00:00'],
    ['s2', 2, '00:00:00'],
    ['s3', 3, '00:00:01'],
  ]);
  await q.waitForScanned(3);
  // 00:00:03 -> watermark 00:00:02 closes [00:00:00, 00:00:02): s1 1, s2 2, s3 3 -> top 2: s3, s2.
  await batch(s, [
    ['s1', 11, '00:00:02'],
    ['s2', 22, '00:00:03'],
    ['s3', 33, '00:00:03'],
  ]);
  await q.waitForRows(2);
  // 00:00:04 closes [00:00:02, 00:00:04): s1 11, s2 22, s3 33 -> top 2: s3, s2.
  await batch(s, [['s4', 44, '00:00:04']]);
  await q.waitForRows(4);
  assert.deepEqual(await q.waitForQuiet(500), [
    ['s3', 1, 3],
    ['s2', 1, 2],
    ['s3', 1, 33],
    ['s2', 1, 22],
  ]);
  await q.cancel();
});

test('rows inserted right after the query starts are live rows, not a backfill (ON UPDATE emits them)', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT window_start, count() AS c FROM tumble(${s}, ts, 10s) GROUP BY window_start EMIT ON UPDATE`,
  );
  // The insert follows the first `event: query` at once: the query was told to start at "latest",
  // so this row is live, not history to backfill.
  await batch(s, [['a', 1, '10:00:01']]);
  await q.waitForRows(1);
  assert.deepEqual(q.rows, [[at('10:00:00'), 1]]);
  await q.cancel();
});

test('LIMIT on a window aggregation ends the query after n rows of closed windows', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT id, window_start, count() AS c FROM tumble(${s}, ts, 10s) GROUP BY id, window_start ORDER BY id LIMIT 2`,
  );
  // 10:00:12 closes W1 with groups a (2 rows), b (1), c (1); ORDER BY id within the emit, LIMIT 2.
  await batch(s, [
    ['c', 1, '10:00:02'],
    ['a', 1, '10:00:01'],
    ['b', 1, '10:00:03'],
    ['a', 1, '10:00:04'],
    ['z', 1, '10:00:12'],
  ]);
  assert.equal((await q.waitForEnd()).status, 'finished');
  assert.deepEqual(q.rows, [
    ['a', at('10:00:00'), 2],
    ['b', at('10:00:00'), 1],
  ]);
});

test('emit_version() of a window aggregation counts per substream and per window (0016_substream_case id 3)', async () => {
  await api.exec("CREATE STREAM tumble_versions (id int32, value int32, t datetime64(3, 'UTC'))");
  const q = await api.start(
    'SELECT window_start, window_end, id, value, max(value), emit_version() FROM tumble(tumble_versions, t, 2s) PARTITION BY id, value GROUP BY window_start, window_end',
  );
  const values = (id: number) =>
    [100, 200, 100, 100, 200, 100].map((v, i) => `(${id}, ${v}, '2020-01-01 10:00:0${i}')`).join(', ');
  // Substream (1, 100) has rows at :00, :02, :03, :05 -> watermark :04 closes [:00, :02) and
  // [:02, :04), versions 0 and 1; (1, 200) has :01, :04 -> [:00, :02) closes, version 0. The same
  // for id 2, whose substreams count their own versions from 0.
  await api.exec(`INSERT INTO tumble_versions (id, value, t) VALUES ${values(1)}`);
  await q.waitForRows(3);
  await api.exec(`INSERT INTO tumble_versions (id, value, t) VALUES ${values(2)}`);
  await q.waitForRows(6);
  const w = (a: string, b: string) => [`2020-01-01 10:00:${a}.000`, `2020-01-01 10:00:${b}.000`];
  assertSameRows(await q.waitForQuiet(500), [
    [...w('00', '02'), 1, 100, 100, 0],
    [...w('02', '04'), 1, 100, 100, 1],
    [...w('00', '02'), 1, 200, 200, 0],
    [...w('00', '02'), 2, 100, 100, 0],
    [...w('02', '04'), 2, 100, 100, 1],
    [...w('00', '02'), 2, 200, 200, 0],
  ]);
  await q.cancel();
});

test('agg() OVER (PARTITION BY id) in a window aggregation makes id a substream with its own watermark', async () => {
  const s = await stream();
  const q = await api.start(
    `SELECT id, window_start, count() OVER (PARTITION BY id) AS c FROM tumble(${s}, ts, 10s) GROUP BY window_start`,
  );
  // a@15 closes a's [10:00:00, 10:00:10) (a@01: count 1); b's watermark is still 10:00:00, so b's
  // window (b@02) stays open. (One shared watermark would close both.)
  await batch(s, [
    ['a', 1, '10:00:01'],
    ['b', 1, '10:00:02'],
  ]);
  await batch(s, [['a', 1, '10:00:15']]);
  await q.waitForRows(1);
  assert.deepEqual(await q.waitForQuiet(500), [['a', at('10:00:00'), 1]]);
  await q.cancel();
});
