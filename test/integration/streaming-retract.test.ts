/**
 * Retracting streaming aggregations over changelog inputs (streaming-sql-notes.md §1.2, §1.11):
 * versioned_kv updates retract the key's previous row, changelog / changelog_kv rows carry
 * `_tp_delta`, and every aggregate is computed over the rows still live. Expected rows are
 * computed by hand from the inserts of each case.
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

test('changelog stream: count, avg, sum, min, max retract deleted rows (0015 id 0)', async () => {
  const cl = await api.createStream('cl_aggr', "(i int32, s string) SETTINGS mode='changelog'");
  const q = await api.start(
    `SELECT count(), avg(i), sum(i), min(i), max(i), min(s), max(s) FROM ${cl} EMIT PERIODIC 200ms`,
  );
  await api.exec(`INSERT INTO ${cl} (i, s) VALUES (1, 's1'), (2, 's2'), (3, 's3')`);
  await q.waitForRows(1);
  await api.exec(`INSERT INTO ${cl} (i, s, _tp_delta) VALUES (1, 's1', -1)`);
  await q.waitForRows(2);
  await api.exec(`INSERT INTO ${cl} (i, s, _tp_delta) VALUES (3, 's3', -1)`);
  assert.deepEqual(await q.settle(3), [
    [3, 2, 6, 1, 3, 's1', 's3'],
    [2, 2.5, 5, 2, 3, 's2', 's3'],
    [1, 2, 2, 2, 2, 's2', 's2'],
  ]);
  await q.cancel();
});

test('versioned_kv: the aggregation starts from the stream state; updates retract (0014 id 6)', async () => {
  const vk = await api.createStream(
    'vk_aggr',
    "(k int32, val int32) PRIMARY KEY k SETTINGS mode='versioned_kv'",
  );
  await api.exec(`INSERT INTO ${vk} (k, val) VALUES (1, 1), (2, 2), (3, 6)`);
  const q = await api.start(
    `SELECT count(), min(val), max(val), sum(val), avg(val) FROM ${vk} EMIT PERIODIC 200ms`,
  );
  await q.waitForRows(1);
  await api.exec(`INSERT INTO ${vk} (k, val) VALUES (1, 3), (3, 4)`);
  assert.deepEqual(await q.settle(2), [
    [3, 1, 6, 9, 3],
    [3, 2, 4, 9, 3],
  ]);
  await q.cancel();
});

test('changelog_kv grouped, ON UPDATE: deletes and re-inserts move rows between groups', async () => {
  const kv = await api.createStream(
    'ckv_group',
    "(id int32, g string, v int32) PRIMARY KEY id SETTINGS mode='changelog_kv'",
  );
  await api.exec(`INSERT INTO ${kv} (id, g, v) VALUES (1, 'a', 10), (2, 'a', 20), (3, 'b', 5)`);
  const q = await api.start(`SELECT g, count(), sum(v), max(v) FROM ${kv} GROUP BY g EMIT ON UPDATE`);
  // The state before the query: a = {10, 20}, b = {5}.
  assertSameRows(await q.settle(2), [
    ['a', 2, 30, 20],
    ['b', 1, 5, 5],
  ]);
  // id 2 moves from a to b with a new value: delete, then insert.
  await api.exec(`INSERT INTO ${kv} (id, g, v, _tp_delta) VALUES (2, 'a', 20, -1), (2, 'b', 7, 1)`);
  assertSameRows((await q.settle(4)).slice(2), [
    ['a', 1, 10, 10],
    ['b', 2, 12, 7],
  ]);
  await q.cancel();
});

test('the _if and distinct forms, arg_min/arg_max and min_k/max_k retract (0013 ids 4, 5, 9)', async () => {
  const kv = await api.createStream(
    'ckv_forms',
    "(id int32, val int32) PRIMARY KEY id SETTINGS mode='changelog_kv'",
  );
  const q = await api.start(
    `SELECT count_if(val > 2), sum_if(val, val > 2), min_if(val, val > 2), max_if(val, val > 2), avg_if(val, val > 2), count_distinct(val), count(DISTINCT val), sum(DISTINCT val), arg_min(id, val), arg_max(id, val), min_k(val, 2), max_k(val, 2), min_k(val, 2, id) FROM ${kv} EMIT PERIODIC 200ms`,
  );
  await api.exec(`INSERT INTO ${kv} (id, val) VALUES (1, 1), (2, 3), (3, 3), (4, 5)`);
  await q.waitForRows(1);
  // Delete id 4 (val 5) and id 1 (val 1): live rows are (2, 3), (3, 3).
  await api.exec(`INSERT INTO ${kv} (id, val, _tp_delta) VALUES (4, 5, -1), (1, 1, -1)`);
  const rows = await q.settle(2);
  assert.deepEqual(rows[0], [
    3,
    11,
    3,
    5,
    11 / 3,
    3,
    3,
    9,
    1,
    4,
    [1, 3],
    [5, 3],
    [
      [1, 1],
      [3, 2],
    ],
  ]);
  const [c, s, mn, mx, avg, cd, cd2, sd, amin, amax, mink, maxk, minkc] = rows[1] as unknown[];
  assert.deepEqual([c, s, mn, mx, avg, cd, cd2, sd], [2, 6, 3, 3, 3, 1, 1, 3]);
  // Ties (val 3 for ids 2 and 3): either id is a right answer of arg_min/arg_max.
  assert.ok([2, 3].includes(amin as number) && [2, 3].includes(amax as number));
  assert.deepEqual(
    [mink, maxk],
    [
      [3, 3],
      [3, 3],
    ],
  );
  assert.equal((minkc as unknown[]).length, 2);
  await q.cancel();
});

test('versioned_kv tumble window: an update retracts the old row from its window', async () => {
  const vk = await api.createStream(
    'vk_tumble',
    "(k string, v int32, ts datetime64(3, 'UTC')) PRIMARY KEY k SETTINGS mode='versioned_kv', event_time_column='ts'",
  );
  const q = await api.start(
    `SELECT window_start, count(), sum(v), min(v) FROM tumble(${vk}, ts, 10s) GROUP BY window_start`,
  );
  await api.exec(
    `INSERT INTO ${vk} (k, v, ts) VALUES ('a', 1, '2024-01-01 00:00:01'), ('b', 2, '2024-01-01 00:00:02')`,
  );
  // 'a' updated within the same window, 'b' moved to the next window (an out-of-order update).
  await api.exec(
    `INSERT INTO ${vk} (k, v, ts) VALUES ('a', 5, '2024-01-01 00:00:03'), ('b', 7, '2024-01-01 00:00:12')`,
  );
  await api.exec(`INSERT INTO ${vk} (k, v, ts) VALUES ('c', 1, '2024-01-01 00:00:25')`);
  // Window [0, 10): only a = 5 is live. Window [10, 20): b = 7.
  const rows = await q.settle(2);
  assert.deepEqual(
    rows.map((r) => [String(r[0]).slice(11, 19), r[1], r[2], r[3]]),
    [
      ['00:00:00', 1, 5, 5],
      ['00:00:10', 1, 7, 7],
    ],
  );
  await q.cancel();
});

test('EMIT CHANGELOG over versioned_kv: a key moving between groups retracts both (0029 id 1)', async () => {
  const vk = await api.createStream(
    'vk_emit_cl',
    "(i int32, k string) PRIMARY KEY i SETTINGS mode='versioned_kv'",
  );
  const q = await api.start(
    `SELECT k, count(), _tp_delta FROM ${vk} GROUP BY k EMIT CHANGELOG PERIODIC 200ms`,
  );
  await api.exec(`INSERT INTO ${vk} (i, k) VALUES (1, 'k1'), (2, 'k1')`);
  await q.waitForRows(1);
  await api.exec(`INSERT INTO ${vk} (i, k) VALUES (1, 'k2')`);
  const rows = await q.settle(4);
  assert.deepEqual(rows.slice(0, 1), [['k1', 2, 1]]);
  assertSameRows(rows.slice(1), [
    ['k1', 2, -1],
    ['k1', 1, 1],
    ['k2', 1, 1],
  ]);
  await q.cancel();
});

test('an aggregate that cannot retract is refused with 48, never answered', async () => {
  const vk = await api.createStream(
    'vk_refuse',
    "(i int32, s string) PRIMARY KEY s SETTINGS mode='versioned_kv'",
  );
  const cl = await api.createStream('cl_refuse', "(i int32) SETTINGS mode='changelog'");
  for (const sql of [
    `SELECT latest(i) FROM ${vk}`,
    `SELECT s, median(i) FROM ${vk} GROUP BY s`,
    `SELECT top_k(i, 2) FROM ${cl}`,
    `SELECT window_start, group_array(i) FROM tumble(${cl}, 2s) GROUP BY window_start`,
    `SELECT unique_exact_if(i, i > 2) FROM ${cl}`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.status, 400, sql);
    assert.equal(e.code, 48, sql);
    assert.match(e.message, /cannot retract/, sql);
  }
});

test('changelog(s, key) in a tail: -old and +new per key update (0027 id 0)', async () => {
  const s = await api.createStream('cl_fn_tail', '(i int32, k string)');
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (1, 'before')`);
  const q = await api.start(`SELECT i, k, _tp_delta FROM changelog(${s}, i)`);
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (1, 'k1')`);
  await q.waitForRows(1);
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (1, 'k2'), (2, 'x')`);
  await q.waitForRows(4);
  // Two versions of key 2 in one batch: one row (the last) and no retraction.
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (2, 'y'), (2, 'z')`);
  // The row from before the query is not a version: the first k1 retracts nothing.
  assert.deepEqual(await q.settle(6), [
    [1, 'k1', 1],
    [1, 'k1', -1],
    [1, 'k2', 1],
    [2, 'x', 1],
    [2, 'x', -1],
    [2, 'z', 1],
  ]);
  await q.cancel();
});

test('changelog(vk, true) and changelog(s, key, version, true): late versions are dropped', async () => {
  const vk = await api.createStream(
    'cl_fn_vk',
    "(i int32, k string) PRIMARY KEY k SETTINGS mode='versioned_kv'",
  );
  const q1 = await api.start(`SELECT i, k, _tp_delta FROM changelog(${vk}, true)`);
  await api.exec(`INSERT INTO ${vk} (i, k) VALUES (1, 'k1')`);
  await q1.waitForRows(1);
  await api.exec(`INSERT INTO ${vk} (i, k) VALUES (2, 'k1')`);
  assert.deepEqual(await q1.settle(3), [
    [1, 'k1', 1],
    [1, 'k1', -1],
    [2, 'k1', 1],
  ]);
  await q1.cancel();

  const s = await api.createStream('cl_fn_ver', '(k string, ver int32, v int32)');
  const q2 = await api.start(`SELECT k, ver, v, _tp_delta FROM changelog(${s}, k, ver, true)`);
  await api.exec(`INSERT INTO ${s} (k, ver, v) VALUES ('a', 2, 20)`);
  await q2.waitForRows(1);
  // Version 1 of a is older than the current version 2: dropped. Version 3 replaces 2.
  await api.exec(`INSERT INTO ${s} (k, ver, v) VALUES ('a', 1, 10)`);
  await api.exec(`INSERT INTO ${s} (k, ver, v) VALUES ('a', 3, 30)`);
  assert.deepEqual(await q2.settle(3), [
    ['a', 2, 20, 1],
    ['a', 2, 20, -1],
    ['a', 3, 30, 1],
  ]);
  await q2.cancel();
});

test('changelog(s, key) under an aggregation: group by the key and globally (0013 ids 45, 46)', async () => {
  const s = await api.createStream('cl_fn_agg', '(id int32, name string, val int32)');
  const q = await api.start(
    `SELECT count(), min(val), max(val), sum(val), avg(val) FROM changelog(${s}, id) EMIT PERIODIC 200ms`,
  );
  const g = await api.start(
    `SELECT name, count(), sum(val) FROM changelog(${s}, id) GROUP BY name EMIT ON UPDATE`,
  );
  await api.exec(`INSERT INTO ${s} (id, name, val) VALUES (1, 'a', 10), (2, 'a', 20), (3, 'b', 30)`);
  await q.waitForRows(1);
  await g.waitForRows(2);
  // id 2 becomes b/40: a = {10}, b = {30, 40}.
  await api.exec(`INSERT INTO ${s} (id, name, val) VALUES (2, 'b', 40)`);
  assert.deepEqual(await q.settle(2), [
    [3, 10, 30, 60, 20],
    [3, 10, 40, 80, 80 / 3],
  ]);
  const rows = await g.settle(4);
  assertSameRows(rows.slice(0, 2), [
    ['a', 2, 30],
    ['b', 1, 30],
  ]);
  assertSameRows(rows.slice(2), [
    ['a', 1, 10],
    ['b', 2, 70],
  ]);
  await q.cancel();
  await g.cancel();
});

test('changelog() arguments: refusals say what to write', async () => {
  const s = await api.createStream('cl_fn_bad', '(i int32, k string)');
  const cl = await api.createStream('cl_fn_bad_cl', "(i int32) SETTINGS mode='changelog'");
  for (const [sql, code] of [
    [`SELECT * FROM changelog(${s})`, 36],
    [`SELECT * FROM changelog(${s}, i + 1)`, 36],
    [`SELECT * FROM changelog(${s}, k, true)`, 36],
    [`SELECT * FROM changelog(${cl}, i)`, 48],
  ] as const) {
    const e = await api.startError(sql);
    assert.equal(e.status, 400, sql);
    assert.equal(e.code, code, `${sql}: ${e.message}`);
    assert.match(e.message, /changelog/, sql);
  }
});

test('EMIT CHANGELOG: a group left with no rows retracts its last row and sends its empty row', async () => {
  const kv = await api.createStream(
    'ckv_gone',
    "(id int32, g string) PRIMARY KEY id SETTINGS mode='changelog_kv'",
  );
  const q = await api.start(`SELECT g, count() FROM ${kv} GROUP BY g EMIT CHANGELOG ON UPDATE`);
  await api.exec(`INSERT INTO ${kv} (id, g) VALUES (1, 'a'), (2, 'b')`);
  await q.waitForRows(2);
  await api.exec(`INSERT INTO ${kv} (id, g, _tp_delta) VALUES (1, 'a', -1)`);
  const rows = await q.settle(3);
  assertSameRows(rows.slice(0, 2), [
    ['a', 1, 1],
    ['b', 1, 1],
  ]);
  // The group stays, with the count of no rows (as Proton keeps it).
  assert.deepEqual(rows.slice(2), [
    ['a', 1, -1],
    ['a', 0, 1],
  ]);
  await q.cancel();
});

test('a global aggregation nested in an aggregation feeds it retractions (0029 id 4)', async () => {
  const s = await api.createStream('nested_cl', '(i int32, k string)');
  const q1 = await api.start(
    `SELECT count() FROM (SELECT k, count() FROM changelog(${s}, i) GROUP BY k EMIT CHANGELOG PERIODIC 200ms) EMIT PERIODIC 200ms`,
  );
  const q2 = await api.start(
    `SELECT count(), _tp_delta FROM (SELECT k, count() FROM changelog(${s}, i) GROUP BY k EMIT PERIODIC 200ms) EMIT CHANGELOG PERIODIC 200ms`,
  );
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (1, 'k1'), (2, 'k1')`);
  await q1.waitForRows(1);
  await q2.waitForRows(1);
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (1, 'k2')`);
  // Groups k1 (2, then 1) and k2 (1): the outer count is the number of groups.
  assert.deepEqual(await q1.settle(2), [[1], [2]]);
  assert.deepEqual(await q2.settle(3), [
    [1, 1],
    [1, -1],
    [2, 1],
  ]);
  await q1.cancel();
  await q2.cancel();
});

test('changelog() over a CTE and over a view: their rows, versioned by key (0027 ids 2, 10)', async () => {
  const s = await api.createStream('cl_fn_cte', '(i int32, k string)');
  const q = await api.start(
    `WITH cte AS (SELECT i, k FROM ${s}) SELECT i, k, _tp_delta FROM changelog(cte, k)`,
  );
  const usage = await api.createStream('cl_fn_usage', '(id int32, max_cpu int32, rate float32)');
  await api.exec(`INSERT INTO ${usage} (id, max_cpu, rate) VALUES (1, 2, 0.25)`);
  await api.exec(
    `CREATE VIEW ${usage}_v AS SELECT id, max_cpu * rate AS income FROM ${usage} WHERE _tp_time > earliest_ts()`,
  );
  const v = await api.start(`SELECT * FROM changelog(${usage}_v, id)`);
  // The view rewinds to the start of the stream: its first row is a version too.
  await v.waitForRows(1);
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (1, 'k1')`);
  await q.waitForRows(1);
  await api.exec(`INSERT INTO ${s} (i, k) VALUES (2, 'k1')`);
  await api.exec(`INSERT INTO ${usage} (id, max_cpu, rate) VALUES (2, 4, 0.5)`);
  await v.waitForRows(2);
  await api.exec(`INSERT INTO ${usage} (id, max_cpu, rate) VALUES (1, 6, 0.75)`);
  assert.deepEqual(await q.settle(3), [
    [1, 'k1', 1],
    [1, 'k1', -1],
    [2, 'k1', 1],
  ]);
  assert.deepEqual(await v.settle(4), [
    [1, 0.5, 1],
    [2, 2, 1],
    [1, 0.5, -1],
    [1, 4.5, 1],
  ]);
  await q.cancel();
  await v.cancel();
});

test('changelog() in a historical query is refused with 48', async () => {
  // changelog() on both sides of a streaming join runs now (streaming-join-changelog.test.ts).
  const l = await api.createStream('cl_join_l', '(i int32, k string)');
  const h = await api.post('/v1beta2/exec', { sql: `SELECT * FROM changelog(${l}, k)`, type: 'historical' });
  assert.equal(h.status, 400);
  assert.equal(((await h.json()) as { code: number }).code, 48);
});

test('changelog_kv hop window: a delete retracts the row from every window it was in', async () => {
  const kv = await api.createStream(
    'ckv_hop',
    "(id int32, v int32, ts datetime64(3, 'UTC')) PRIMARY KEY id SETTINGS mode='changelog_kv', event_time_column='ts'",
  );
  const q = await api.start(
    `SELECT window_start, count(), sum(v) FROM hop(${kv}, ts, 2s, 4s) GROUP BY window_start`,
  );
  await api.exec(`INSERT INTO ${kv} (id, v, ts) VALUES (1, 1, '2024-01-01 00:00:01')`);
  await api.exec(`INSERT INTO ${kv} (id, v, ts, _tp_delta) VALUES (1, 1, '2024-01-01 00:00:01', -1)`);
  await api.exec(`INSERT INTO ${kv} (id, v, ts) VALUES (2, 2, '2024-01-01 00:00:03')`);
  await api.exec(`INSERT INTO ${kv} (id, v, ts) VALUES (3, 9, '2024-01-01 00:00:10')`);
  // Row 1 was in [-2, 2) and [0, 4); once deleted, [-2, 2) has no rows (sent with count 0, as
  // Proton keeps the window) and [0, 4) only row 2, which is also in [2, 6).
  const rows = await q.settle(3);
  assert.deepEqual(
    rows.map((r) => [String(r[0]).slice(11, 19), r[1], r[2]]),
    [
      ['23:59:58', 0, 0],
      ['00:00:00', 1, 2],
      ['00:00:02', 1, 2],
    ],
  );
  await q.cancel();
});

test('group_uniq_array over versioned_kv: the live values, in order (0013 id 109)', async () => {
  const vk = await api.createStream(
    'vk_uniq',
    "(id int32, val int32) PRIMARY KEY id SETTINGS mode='versioned_kv'",
  );
  const q = await api.start(`SELECT group_uniq_array(val) FROM ${vk} EMIT ON UPDATE`);
  const steps: [string, unknown[]][] = [
    ['(1, 1)', [1]],
    ['(1, 2)', [2]],
    ['(2, 3)', [2, 3]],
    ['(3, 3)', [2, 3]],
    ['(3, 4)', [2, 3, 4]],
  ];
  for (const [i, [values, expected]] of steps.entries()) {
    await api.exec(`INSERT INTO ${vk} (id, val) VALUES ${values}`);
    await q.waitForRows(i + 1);
    assert.deepEqual(q.rows[i], [expected], values);
  }
  await q.cancel();
});

test('count forms read weighted tuples: repeated values, NULLs, count_if (no repetition at emit)', async () => {
  const cl = await api.createStream('cl_weighted', "(v nullable(int32)) SETTINGS mode='changelog'");
  const q = await api.start(
    `SELECT count(), count(v), count_if(v > 1), count(DISTINCT v), min(v), max(v) FROM ${cl} EMIT PERIODIC 200ms`,
  );
  await api.exec(`INSERT INTO ${cl} (v) VALUES (1), (2), (2), (2), (NULL), (3)`);
  await q.waitForRows(1);
  // One 2 and the 3 deleted: live rows 1, 2, 2, NULL.
  await api.exec(`INSERT INTO ${cl} (v, _tp_delta) VALUES (2, -1), (3, -1)`);
  assert.deepEqual(await q.settle(2), [
    [6, 5, 4, 3, 1, 3],
    [4, 3, 2, 2, 1, 2],
  ]);
  await q.cancel();
});

test('a subquery, a view or a CTE between the aggregation and its versioned_kv input carries _tp_delta (0013 id 82)', async () => {
  const vk = await api.createStream(
    'vk_sub',
    "(i int32, k1 int32, k2 string) PRIMARY KEY k1 SETTINGS mode='versioned_kv'",
  );
  await api.exec(`CREATE VIEW ${vk}_v AS SELECT i, k1, k2 FROM ${vk}`);
  const q1 = await api.start(
    `SELECT max(i), count(i), k2 FROM (SELECT i, k2 FROM ${vk}_v WHERE k2 = 'a') GROUP BY k2 EMIT ON UPDATE`,
  );
  const q2 = await api.start(
    `WITH c AS (SELECT i, k2 FROM ${vk}) SELECT max(i), count(i), k2 FROM c GROUP BY k2 EMIT ON UPDATE`,
  );
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (5, 1, 'a'), (7, 2, 'a')`);
  await q1.waitForRows(1);
  await q2.waitForRows(1);
  // k1 = 2 changes from 7 to 3: the max of group a is 5 again, its count still 2.
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (3, 2, 'a')`);
  assert.deepEqual(await q1.settle(2), [
    [7, 2, 'a'],
    [5, 2, 'a'],
  ]);
  assert.deepEqual(await q2.settle(2), [
    [7, 2, 'a'],
    [5, 2, 'a'],
  ]);
  await q1.cancel();
  await q2.cancel();
});

test('versioned_kv tumble window over history: the stored rows are the state, read as a backfill', async () => {
  const vk = await api.createStream(
    'vk_tumble_hist',
    "(k string, v int32, ts datetime64(3, 'UTC')) PRIMARY KEY k SETTINGS mode='versioned_kv', event_time_column='ts'",
  );
  await api.exec(
    `INSERT INTO ${vk} (k, v, ts) VALUES ('a', 1, '2024-01-01 00:00:01'), ('b', 2, '2024-01-01 00:00:12')`,
  );
  // 'a' moves to the second window before the query starts.
  await api.exec(`INSERT INTO ${vk} (k, v, ts) VALUES ('a', 4, '2024-01-01 00:00:15')`);
  const q = await api.start(
    `SELECT window_start, count(), sum(v) FROM tumble(${vk}, ts, 10s) GROUP BY window_start`,
  );
  await api.exec(`INSERT INTO ${vk} (k, v, ts) VALUES ('c', 1, '2024-01-01 00:00:31')`);
  // Window [0, 10) lost its only row; [10, 20) holds b = 2 and a = 4; [20, 30) is empty.
  const rows = await q.settle(1);
  assert.deepEqual(
    rows.map((r) => [String(r[0]).slice(11, 19), r[1], r[2]]),
    [['00:00:10', 2, 6]],
  );
  await q.cancel();
});

test('append JOIN changelog(s, key): each left row meets the latest right row of its key (0027 ids 4, 5, 7)', async () => {
  const l = await api.createStream('clj_l', '(i int32, k string)');
  const r = await api.createStream('clj_r', '(j int32, kk string)');
  const vk = await api.createStream(
    'clj_vk',
    "(j int32, kk string) PRIMARY KEY kk SETTINGS mode='versioned_kv'",
  );
  // Rows from before the query are no versions of changelog(): j = 1 matches nothing.
  await api.exec(`INSERT INTO ${r} (j, kk) VALUES (1, 'kk0')`);
  const inner = await api.start(
    `SELECT i, k, j, kk FROM ${l} AS a INNER JOIN changelog(${r}, kk) AS b ON a.i = b.j`,
  );
  const left = await api.start(
    `SELECT i, k, j, kk FROM ${l} AS a LEFT JOIN changelog(${r}, kk) AS b ON a.i = b.j`,
  );
  const onKv = await api.start(
    `SELECT i, k, j, kk FROM ${l} AS a INNER JOIN changelog(${vk}, true) AS b ON a.i = b.j`,
  );
  await api.exec(`INSERT INTO ${r} (j, kk) VALUES (1, 'kk1')`);
  await api.exec(`INSERT INTO ${vk} (j, kk) VALUES (1, 'kk1')`);
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (1, 'k1')`);
  await inner.waitForRows(1);
  // kk1 becomes j = 2: j = 1 is no longer a row of the changelog's latest state.
  await api.exec(`INSERT INTO ${r} (j, kk) VALUES (2, 'kk1')`);
  await api.exec(`INSERT INTO ${vk} (j, kk) VALUES (2, 'kk1')`);
  await api.exec(`INSERT INTO ${l} (i, k) VALUES (2, 'k1'), (1, 'k2')`);
  const expected = [
    [1, 'k1', 1, 'kk1'],
    [2, 'k1', 2, 'kk1'],
  ];
  assertSameRows(await inner.settle(2), expected);
  assertSameRows(await onKv.settle(2), expected);
  assertSameRows(await left.settle(3), [...expected, [1, 'k2', 0, '']]);
  await inner.cancel();
  await left.cancel();
  await onKv.cancel();
});

test('changelog() inside a subquery or a CTE the query reads (0013 ids 49, 51)', async () => {
  const s = await api.createStream('cl_fn_nested', '(id int32, name string, val int32)');
  const tail = await api.start(`SELECT id, val, _tp_delta FROM (SELECT * FROM changelog(${s}, id))`);
  const agg = await api.start(
    `WITH sub AS (SELECT * FROM changelog(${s}, id)) SELECT name, count(), max(val) FROM sub GROUP BY name EMIT ON UPDATE`,
  );
  await api.exec(`INSERT INTO ${s} (id, name, val) VALUES (1, 'a', 10), (2, 'a', 20)`);
  await tail.waitForRows(2);
  await agg.waitForRows(1);
  await api.exec(`INSERT INTO ${s} (id, name, val) VALUES (2, 'a', 5)`);
  assert.deepEqual(await tail.settle(4), [
    [1, 10, 1],
    [2, 20, 1],
    [2, 20, -1],
    [2, 5, 1],
  ]);
  assert.deepEqual(await agg.settle(2), [
    ['a', 2, 20],
    ['a', 2, 10],
  ]);
  await tail.cancel();
  await agg.cancel();
});

test('a view over changelog() reads like changelog() itself (0013_changelog_stream3 id 52)', async () => {
  const s = await api.createStream('cl_fn_view', '(i int32, k1 int32, k2 string)');
  await api.exec(`CREATE VIEW ${s}_v AS (SELECT i, k1, k2, _tp_delta FROM changelog(${s}, k1, k2))`);
  const q = await api.start(`SELECT i, k1, k2, _tp_delta FROM (SELECT * FROM ${s}_v)`);
  await api.exec(`INSERT INTO ${s} (i, k1, k2) VALUES (1, 1, 'a')`);
  await q.waitForRows(1);
  await api.exec(`INSERT INTO ${s} (i, k1, k2) VALUES (2, 1, 'a')`);
  assert.deepEqual(await q.settle(3), [
    [1, 1, 'a', 1],
    [1, 1, 'a', -1],
    [2, 1, 'a', 1],
  ]);
  await q.cancel();
});

test('a group whose rows are all retracted is emitted with the aggregates of no rows (0013_changelog_stream6 id 30)', async () => {
  const s = await api.createStream('cl_empty_group', '(val float64, id int32, name string)');
  const q = await api.start(
    `SELECT max(val), min(val), avg(val), count(), name FROM changelog(${s}, id) GROUP BY name EMIT ON UPDATE`,
  );
  await api.exec(`INSERT INTO ${s} (val, id, name) VALUES (1, 2, 'a')`);
  await q.waitForRows(1);
  // id 2 moves from a to b: a has no rows left.
  await api.exec(`INSERT INTO ${s} (val, id, name) VALUES (8, 2, 'b')`);
  const rows = await q.settle(3);
  assert.deepEqual(rows[0], [1, 1, 1, 1, 'a']);
  assertSameRows(rows.slice(1), [
    [0, 0, 'nan', 0, 'a'],
    [8, 8, 8, 1, 'b'],
  ]);
  await q.cancel();
});

test('rows filtered out before a retracting aggregation cause no periodic emit (0013_changelog_stream10 id 82)', async () => {
  const vk = await api.createStream(
    'vk_filtered',
    "(i float64, k1 int32, k2 string) PRIMARY KEY k2 SETTINGS mode='versioned_kv'",
  );
  const q = await api.start(
    `SELECT max(i), count(i), k2 FROM (SELECT i, k2 FROM ${vk} WHERE k1 = 1) GROUP BY k2 EMIT PERIODIC 200ms`,
  );
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (1, 1, 'a')`);
  await q.waitForRows(1);
  // Key e never passes the filter; a's new row does not either, its old row is retracted.
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (5, 0, 'e')`);
  await q.waitForQuiet(600);
  await api.exec(`INSERT INTO ${vk} (i, k1, k2) VALUES (3, 0, 'a')`);
  assert.deepEqual(await q.settle(2), [
    [1, 1, 'a'],
    [0, 0, 'a'],
  ]);
  await q.cancel();
});

test('a global aggregation over a nested one with its own EMIT PERIODIC: one outer row per inner change (0013_changelog_stream3 id 55)', async () => {
  const s = await api.createStream('nested_follow', '(id int32, name string, val float64)');
  const q = await api.start(
    `WITH sub AS (SELECT id, count() AS cnt, min(val) AS min_val, max(val) AS max_val FROM changelog(${s}, name) GROUP BY id EMIT PERIODIC 200ms) SELECT count(*), sum(cnt), min(min_val), max(max_val) FROM sub`,
  );
  // changelog(s, name): rows of one name in one insert give its last row only.
  const inserts = [
    "(1, 'a', 11.5), (2, 'a', 33.5)", // id 2: {33.5}
    "(1, 'b', 22.5), (2, 'b', 22.5)", // id 2: {33.5, 22.5}
    "(1, 'c', 33.5), (2, 'c', 11.5)", // id 2: {33.5, 22.5, 11.5}
    "(1, 'b', 44.5), (2, 'b', 44.5)", // b's 22.5 retracted: id 2: {33.5, 11.5, 44.5}
  ];
  for (const [n, values] of inserts.entries()) {
    await api.exec(`INSERT INTO ${s} (id, name, val) VALUES ${values}`);
    await q.waitForRows(n + 1);
  }
  assert.deepEqual(await q.settle(4), [
    [1, 1, 33.5, 33.5],
    [1, 2, 22.5, 33.5],
    [1, 3, 11.5, 33.5],
    [1, 3, 11.5, 44.5],
  ]);
  await q.cancel();
});
