/**
 * A stream joined with bounded data (`table(dim)`, a bounded view) through the REST API
 * (streaming-sql-notes.md §1.9, "enrichment against a snapshot of the right side"): the right side
 * is read once when the query starts (Proton builds its hash table then; a changing right side is
 * what versioned_kv dynamic enrichment is for), each step joins the new rows of the stream with it.
 * INNER and LEFT, under a tail, a global aggregation, a tumble window, and a window over a
 * subquery whose body joins a windowed stream with table(dim). Expected rows are worked out by hand.
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

/** A dimension stream (k -> name) with rows 1 -> one, 2 -> two, and an event stream. */
async function setup(): Promise<{ dim: string; ev: string }> {
  const dim = await api.createStream('dim', '(k int32, name string)');
  await api.exec(`INSERT INTO ${dim} (k, name) VALUES (1, 'one'), (2, 'two')`);
  const ev = await api.createStream('ev', '(k int32, v int32, t datetime64(3))', 't');
  return { dim, ev };
}

const events = (ev: string, rows: [number, number, string][]) =>
  api.exec(
    `INSERT INTO ${ev} (k, v, t) VALUES ${rows.map(([k, v, t]) => `(${k}, ${v}, '2024-01-01 ${t}')`).join(', ')}`,
  );

test('INNER and LEFT JOIN table(dim): each new event meets the dimension rows', async () => {
  const { dim, ev } = await setup();
  const inner = await api.start(
    `SELECT e.v, d.name FROM ${ev} AS e INNER JOIN table(${dim}) AS d ON e.k = d.k`,
  );
  const leftJ = await api.start(`SELECT v, name FROM ${ev} LEFT JOIN table(${dim}) AS d ON ${ev}.k = d.k`);
  await events(ev, [
    [1, 10, '00:00:01'],
    [3, 30, '00:00:02'],
    [2, 20, '00:00:03'],
  ]);
  // k=3 has no dimension row: INNER drops it, LEFT keeps it with the default name ''.
  assertSameRows(await inner.settle(2), [
    [10, 'one'],
    [20, 'two'],
  ]);
  assertSameRows(await leftJ.settle(3), [
    [10, 'one'],
    [30, ''],
    [20, 'two'],
  ]);
  // The dimension as the query started: a row added later is not seen (Proton's snapshot).
  await api.exec(`INSERT INTO ${dim} (k, name) VALUES (3, 'three')`);
  await events(ev, [[3, 31, '00:00:04']]);
  assert.deepEqual((await leftJ.settle(4)).at(-1), [31, '']);
  assert.equal((await inner.waitForQuiet(400)).length, 2);
  // A query started now sees it.
  const later = await api.start(`SELECT v, name FROM ${ev} INNER JOIN table(${dim}) AS d ON ${ev}.k = d.k`);
  await events(ev, [[3, 32, '00:00:05']]);
  assert.deepEqual(await later.settle(1), [[32, 'three']]);
  for (const q of [inner, leftJ, later]) await q.cancel();
  // The snapshots are engine tables of the queries: gone once they end.
  let left = -1;
  for (let i = 0; i < 50 && left !== 0; i++) {
    const c = await api.start(
      "SELECT count() FROM system.tables WHERE database = '_tributary_state' AND startsWith(name, 's_')",
    );
    await c.waitForEnd();
    left = Number(c.rows[0]?.[0]);
    if (left !== 0) await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(left, 0);
});

test('a global aggregation over a stream joined with table(dim)', async () => {
  const { dim, ev } = await setup();
  const q = await api.start(
    `SELECT d.name, sum(e.v) AS total FROM ${ev} AS e INNER JOIN table(${dim}) AS d ON e.k = d.k GROUP BY d.name EMIT PERIODIC 200ms`,
  );
  await events(ev, [
    [1, 10, '00:00:01'],
    [2, 20, '00:00:02'],
    [1, 5, '00:00:03'],
    [3, 99, '00:00:04'],
  ]);
  await q.waitForRows(2);
  const rows = await q.waitForQuiet(600);
  // one: 10 + 5, two: 20; k=3 has no match.
  assertSameRows(rows.slice(-2), [
    ['one', 15],
    ['two', 20],
  ]);
  await q.cancel();
});

test('tumble(stream) JOIN table(dim): windows close with the stream watermark', async () => {
  const { dim, ev } = await setup();
  const q = await api.start(
    `SELECT window_start, d.name, count() AS c FROM tumble(${ev}, t, 5s) AS e INNER JOIN table(${dim}) AS d ON e.k = d.k GROUP BY window_start, d.name`,
  );
  await events(ev, [
    [1, 1, '00:00:01'],
    [2, 1, '00:00:02'],
    [1, 1, '00:00:04'],
  ]);
  await q.waitForScanned(3);
  // 00:00:06 moves the watermark past the window [0, 5): it closes with one: 2, two: 1.
  await events(ev, [[1, 1, '00:00:06']]);
  assertSameRows(await q.settle(2), [
    ['2024-01-01 00:00:00.000', 'one', 2],
    ['2024-01-01 00:00:00.000', 'two', 1],
  ]);
  await q.cancel();
});

test('a window over a subquery whose body joins a windowed stream with table(dim) keeps the body columns', async () => {
  const { dim, ev } = await setup();
  // Issue 10 item 4: the outer window groups by the body's columns.
  const q = await api.start(
    `SELECT window_start, name, sum(v) AS total FROM tumble((SELECT e.t AS t, e.v AS v, d.name AS name FROM ${ev} AS e INNER JOIN table(${dim}) AS d ON e.k = d.k), t, 5s) GROUP BY window_start, name`,
  );
  await events(ev, [
    [1, 10, '00:00:01'],
    [2, 20, '00:00:02'],
    [1, 5, '00:00:03'],
  ]);
  await q.waitForScanned(3);
  await events(ev, [[2, 1, '00:00:07']]);
  assertSameRows(await q.settle(2), [
    ['2024-01-01 00:00:00.000', 'one', 15],
    ['2024-01-01 00:00:00.000', 'two', 20],
  ]);
  await q.cancel();
});

test('a window over a CTE whose body joins tumble(stream) with table(dim) (issue 10 item 4)', async () => {
  const { dim, ev } = await setup();
  // The body is windowed (5 s) and enriched; the outer window (10 s) groups by the body's columns.
  const q = await api.start(
    `WITH j AS (SELECT e.window_start AS ws, e.t AS t, e.v AS v, d.name AS name FROM tumble(${ev}, t, 5s) AS e INNER JOIN table(${dim}) AS d ON e.k = d.k) SELECT window_start, name, count() AS c, min(ws) AS first_ws FROM tumble(j, t, 10s) GROUP BY window_start, name`,
  );
  await events(ev, [
    [1, 1, '00:00:01'],
    [1, 1, '00:00:06'],
    [2, 1, '00:00:07'],
  ]);
  await q.waitForScanned(3);
  await events(ev, [[2, 1, '00:00:12']]);
  assertSameRows(await q.settle(2), [
    ['2024-01-01 00:00:00.000', 'one', 2, '2024-01-01 00:00:00.000'],
    ['2024-01-01 00:00:00.000', 'two', 1, '2024-01-01 00:00:05.000'],
  ]);
  await q.cancel();
});

test('RIGHT and FULL JOIN of a stream with table(dim) are refused with what is allowed', async () => {
  const { dim, ev } = await setup();
  for (const kind of ['RIGHT', 'FULL']) {
    const e = await api.startError(`SELECT v FROM ${ev} ${kind} JOIN table(${dim}) AS d ON ${ev}.k = d.k`);
    assert.equal(e.code, 48, e.message);
    assert.match(e.message, /INNER, LEFT or CROSS JOIN/);
  }
  // A date_diff against a constant is a filter, not a time range: accepted.
  const q = await api.start(
    `SELECT v FROM ${ev} AS e INNER JOIN table(${dim}) AS d ON e.k = d.k AND date_diff('second', e.t, to_datetime64('2030-01-01 00:00:00', 3)) > 0`,
  );
  await events(ev, [[1, 10, '00:00:01']]);
  assert.deepEqual(await q.settle(1), [[10]]);
  await q.cancel();
});

test('stream JOIN table(changelog_kv): every row of a key stands until a delete takes back its newest', async () => {
  const dim = await api.createStream(
    'ckv',
    "(ii int32, jj int32, kk string) PRIMARY KEY jj SETTINGS mode='changelog_kv'",
  );
  // Key 2: (1,2,a), then (5,2,c), then a delete of key 2, which takes back (5,2,c), the newest.
  // Key 3: (1,3,b), then a second row (4,3,d), both standing. Key 7: one row, then deleted.
  for (const row of [
    "(1, 2, 'a', 1)",
    "(1, 3, 'b', 1)",
    "(5, 2, 'c', 1)",
    "(1, 2, 'a', -1)",
    "(4, 3, 'd', 1)",
    "(2, 7, 'h', 1)",
    "(2, 7, 'h', -1)",
  ])
    await api.exec(`INSERT INTO ${dim} (ii, jj, kk, _tp_delta) VALUES ${row}`);
  const ev = await api.createStream('ev', '(j int32, v int32)');
  const inner = await api.start(
    `SELECT v, ii, kk FROM ${ev} AS a INNER JOIN table(${dim}) AS b ON a.j = b.jj`,
  );
  const leftJ = await api.start(
    `SELECT v, ii, kk FROM ${ev} AS a LEFT JOIN table(${dim}) AS b ON a.j = b.jj`,
  );
  await api.exec(`INSERT INTO ${ev} (j, v) VALUES (2, 20), (3, 30), (7, 70)`);
  assertSameRows(await inner.settle(3), [
    [20, 1, 'a'],
    [30, 1, 'b'],
    [30, 4, 'd'],
  ]);
  assertSameRows(await leftJ.settle(4), [
    [20, 1, 'a'],
    [30, 1, 'b'],
    [30, 4, 'd'],
    [70, 0, ''],
  ]);
  // A historical table() still reads the latest row per key, keys whose latest row is a delete
  // dropped (2 and 7).
  const h = await api.start(`SELECT jj, ii, kk FROM table(${dim}) ORDER BY jj`);
  await h.waitForEnd();
  assert.deepEqual(h.rows, [[3, 4, 'd']]);
  for (const q of [inner, leftJ]) await q.cancel();
});
