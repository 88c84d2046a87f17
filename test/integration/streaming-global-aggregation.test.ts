/**
 * Streaming global aggregation (no window function) through the REST API: the default periodic
 * emit (every 2 s, skipped without new data), emit_version(), ORDER BY and LIMIT BY per emit, and
 * LIMIT ending the query. The other emit policies are in streaming-emit-policies.test.ts.
 * Semantics: streaming-sql-notes.md §1.6 (global aggregation), §1.10, §1.11 (emit_version).
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

async function stream(name: string): Promise<void> {
  await api.exec(
    `CREATE STREAM ${name} (id string, v int32, ts datetime64(3, 'UTC')) SETTINGS event_time_column='ts'`,
  );
}

test('default emit: the full result every 2 s, skipped while no new data arrives', async () => {
  await stream('g_default');
  // A row from before the query: a streaming aggregation starts at "latest" and never counts it.
  await api.exec("INSERT INTO g_default (id, v) VALUES ('old', 100)");
  const q = await api.start('SELECT count() AS c, sum(v) AS total FROM g_default');
  await api.exec("INSERT INTO g_default (id, v) VALUES ('a', 1), ('b', 2)");
  // First tick after the batch: count 2, sum 1 + 2 = 3.
  await q.waitForRows(1);
  assert.deepEqual(q.rows, [[2, 3]]);
  // Two more periods pass without new rows: no tick emits (no duplicate of [2, 3]).
  const quiet = await q.waitForQuiet(4_500);
  assert.deepEqual(quiet, [[2, 3]]);
  await api.ingest('g_default', ['id', 'v'], [['c', 4]]);
  // Next tick: the full result again, count 3, sum 1 + 2 + 4 = 7.
  await q.waitForRows(2);
  assert.deepEqual(q.rows, [
    [2, 3],
    [3, 7],
  ]);
  await q.cancel();
});

test('emit_version(): 0, 1, 2, ... per emit, shared by every row of one emit', async () => {
  await stream('g_version');
  const q = await api.start(
    'SELECT id, count() AS c, emit_version() AS ver FROM g_version GROUP BY id EMIT PERIODIC 1s',
  );
  await api.exec("INSERT INTO g_version (id, v) VALUES ('a', 1), ('b', 1)");
  await q.waitForRows(2);
  await api.exec("INSERT INTO g_version (id, v) VALUES ('a', 1)");
  await q.waitForRows(4);
  await api.exec("INSERT INTO g_version (id, v) VALUES ('c', 1)");
  await q.waitForRows(7);
  // Emit 0: a=1, b=1. Emit 1 (full result): a=2, b=1. Emit 2: a=2, b=1, c=1.
  assertSameRows(q.rows.slice(0, 2), [
    ['a', 1, 0],
    ['b', 1, 0],
  ]);
  assertSameRows(q.rows.slice(2, 4), [
    ['a', 2, 1],
    ['b', 1, 1],
  ]);
  assertSameRows(q.rows.slice(4), [
    ['a', 2, 2],
    ['b', 1, 2],
    ['c', 1, 2],
  ]);
  await q.cancel();
});

test('ORDER BY sorts within each emit, not across emits', async () => {
  await stream('g_order');
  const q = await api.start(
    'SELECT id, sum(v) AS total FROM g_order GROUP BY id ORDER BY id EMIT PERIODIC 1s',
  );
  await api.exec("INSERT INTO g_order (id, v) VALUES ('c', 1), ('a', 2), ('b', 3)");
  await q.waitForRows(3);
  await api.exec("INSERT INTO g_order (id, v) VALUES ('aa', 4)");
  await q.waitForRows(7);
  // Emit 1 sorted by id: a, b, c. Emit 2 (full result) sorted by id: a, aa, b, c.
  assert.deepEqual(q.rows, [
    ['a', 2],
    ['b', 3],
    ['c', 1],
    ['a', 2],
    ['aa', 4],
    ['b', 3],
    ['c', 1],
  ]);
  await q.cancel();
});

test('ORDER BY ... LIMIT n BY emit_version(): top n per emit', async () => {
  // streaming-sql-notes §1.10 / 0019_limit_by id 0, with a second emit added.
  await api.exec('CREATE STREAM g_limit_by (i int32, s string)');
  const q = await api.start(
    'SELECT s, latest(i) AS i, emit_version() AS version FROM g_limit_by GROUP BY s ORDER BY i DESC LIMIT 2 BY version EMIT PERIODIC 1s',
  );
  await api.exec("INSERT INTO g_limit_by (i, s) VALUES (1, 's1'), (2, 's2'), (3, 's3'), (4, 's4')");
  // Emit 0: latest per s = s1:1 s2:2 s3:3 s4:4; top 2 by i desc: s4, s3.
  await q.waitForRows(2);
  await api.exec("INSERT INTO g_limit_by (i, s) VALUES (10, 's1')");
  // Emit 1: s1:10 s2:2 s3:3 s4:4; top 2: s1, s4.
  await q.waitForRows(4);
  assert.deepEqual(q.rows, [
    ['s4', 4, 0],
    ['s3', 3, 0],
    ['s1', 10, 1],
    ['s4', 4, 1],
  ]);
  assert.deepEqual(await q.waitForQuiet(1_500), q.rows.slice(0, 4), 'nothing else');
  await q.cancel();
});

test('LIMIT n ends an aggregation once n rows have been emitted', async () => {
  // Like 0000_smoke_case id 15: the first emit has more groups than the limit; n of them are sent.
  await stream('g_limit');
  const q = await api.start('SELECT id, max(v) AS m FROM g_limit GROUP BY id LIMIT 3 EMIT PERIODIC 1s');
  await api.exec(
    "INSERT INTO g_limit (id, v) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('a', 6)",
  );
  const final = await q.waitForEnd();
  assert.equal(final.status, 'finished');
  // Groups: a=6, b=2, c=3, d=4, e=5. Which 3 is not defined (no ORDER BY); they are distinct groups.
  assert.equal(q.rows.length, 3);
  const all = new Map([
    ['a', 6],
    ['b', 2],
    ['c', 3],
    ['d', 4],
    ['e', 5],
  ]);
  for (const [id, m] of q.rows as [string, number][]) assert.equal(all.get(id), m, JSON.stringify(q.rows));
  assert.equal(new Set(q.rows.map((r) => r[0])).size, 3);
});

test("a select item may use another item's alias; an unaggregated column is still refused", async () => {
  // 0007_type_and_func_case ids 6-9: aggregates named, then combined by their aliases.
  await stream('g_alias');
  const q = await api.start(
    'SELECT group_array(id) AS ids, group_array(v) AS vs, map_cast(ids, vs) AS m, length(ids) + 1 AS n, ' +
      "m['b'] AS b FROM (SELECT id, sum(v) AS v FROM g_alias GROUP BY id ORDER BY id) LIMIT 1",
  );
  await api.exec("INSERT INTO g_alias (id, v) VALUES ('a', 1), ('b', 2), ('b', 5)");
  await q.waitForEnd();
  assert.deepEqual(q.rows, [[['a', 'b'], [1, 7], { a: 1, b: 7 }, 3, 7]]);
  // An alias is not visible to its own expression, and a plain column stays an error (215).
  const own = await api.startError('SELECT id AS id, count() FROM g_alias');
  assert.equal(own.code, 215, JSON.stringify(own));
});

test('global aggregation refuses watermark emit (only for window functions)', async () => {
  await stream('g_err');
  // §1.6: AFTER WATERMARK on a global aggregation errors (INCORRECT_QUERY, 80).
  const e = await api.startError('SELECT count() FROM g_err EMIT AFTER WATERMARK');
  assert.equal(e.code, 80, JSON.stringify(e));
  const d = await api.startError('SELECT count() FROM g_err EMIT AFTER WATERMARK WITH DELAY 1s');
  assert.equal(d.code, 80, JSON.stringify(d));
});

test('PARTITION BY and agg() OVER (PARTITION BY k): one aggregation per substream (0016 id 0)', async () => {
  await stream('g_substream');
  const part = await api.start(
    'SELECT id, count() AS c, sum(v) AS total FROM g_substream PARTITION BY id EMIT PERIODIC 1s',
  );
  const over = await api.start(
    'SELECT id, sum(v) OVER (PARTITION BY id) AS total FROM g_substream EMIT PERIODIC 1s',
  );
  await api.exec("INSERT INTO g_substream (id, v) VALUES ('a', 1), ('b', 2), ('a', 3)");
  await part.waitForRows(2);
  await over.waitForRows(2);
  // Substream a: 1 + 3 (2 rows); substream b: 2 (1 row).
  assertSameRows(part.rows, [
    ['a', 2, 4],
    ['b', 1, 2],
  ]);
  assertSameRows(over.rows, [
    ['a', 4],
    ['b', 2],
  ]);
  for (const q of [part, over]) await q.cancel();
});

test('PARTITION BY: a periodic emit sends only the substreams that got rows since the last one (0012 id 0)', async () => {
  await stream('g_substream_changed');
  const q = await api.start(
    'SELECT id, count() AS c, max(v) AS m FROM g_substream_changed PARTITION BY id GROUP BY id EMIT PERIODIC 1s',
  );
  await api.exec("INSERT INTO g_substream_changed (id, v) VALUES ('a', 1), ('b', 2)");
  await q.waitForRows(2);
  // Only substream a changes: the next emit has its row alone, not b's again.
  await api.exec("INSERT INTO g_substream_changed (id, v) VALUES ('a', 5)");
  await q.waitForRows(3);
  await new Promise((r) => setTimeout(r, 2500));
  assertSameRows(q.rows, [
    ['a', 1, 1],
    ['b', 1, 2],
    ['a', 2, 5],
  ]);
  // Without PARTITION BY, every periodic emit with new data sends every group.
  await stream('g_all_groups');
  const all = await api.start('SELECT id, count() AS c FROM g_all_groups GROUP BY id EMIT PERIODIC 1s');
  await api.exec("INSERT INTO g_all_groups (id, v) VALUES ('a', 1), ('b', 2)");
  await all.waitForRows(2);
  await api.exec("INSERT INTO g_all_groups (id, v) VALUES ('a', 5)");
  await all.waitForRows(4);
  assertSameRows(all.rows.slice(2), [
    ['a', 2],
    ['b', 1],
  ]);
  for (const x of [q, all]) await x.cancel();
});
