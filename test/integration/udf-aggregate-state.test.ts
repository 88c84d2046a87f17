/**
 * What a plain JavaScript aggregate's process() gets beside its values: the deltas of its rows
 * over a changelog input (Proton's `_tp_delta`, +1 per live row here), nothing over an append
 * stream or in a historical query.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Harness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
let h: Harness;
const q = new SqlCalls(() => h);
before(async () => {
  api = await StreamingApi.open();
  h = api.h;
});
after(async () => {
  await h.close();
});

/** Answers what process() was given: how many calls had deltas, their sum, and the values' count. */
const DELTA_PROBE = `CREATE AGGREGATE FUNCTION delta_probe(value int32) RETURNS string LANGUAGE JAVASCRIPT AS $$
{
  initialize: function () { this.args = -1; this.n = 0; this.sum = 0; },
  process: function (values, deltas) {
    this.args = arguments.length;
    this.n += values.length;
    if (deltas !== undefined) for (let i = 0; i < deltas.length; i++) this.sum += deltas[i];
  },
  finalize: function () { return 'args=' + this.args + ' n=' + this.n + ' deltas=' + this.sum; }
}
$$`;

test('process() gets the deltas after the values over a changelog input, and no deltas otherwise', async () => {
  await api.exec(DELTA_PROBE);
  await api.exec(
    "CREATE STREAM udf_kv_deltas (k string, g int8, v int32) PRIMARY KEY k SETTINGS mode='versioned_kv'",
  );
  const append = await api.createStream('udf_append_deltas', '(g int8, v int32)');

  // a versioned_kv stream read as a stream is a changelog: each update retracts the key's row
  const kv = await api.start('SELECT g, delta_probe(v) FROM udf_kv_deltas GROUP BY g EMIT ON UPDATE');
  await api.ingest(
    'udf_kv_deltas',
    ['k', 'g', 'v'],
    [
      ['a', 1, 10],
      ['b', 1, 20],
    ],
  );
  assertSameRows(await kv.waitForRows(1), [[1, 'args=2 n=2 deltas=2']]);
  // 'a' moves to group 2: group 1 keeps one live row (its delta +1), group 2 gets one
  await api.ingest('udf_kv_deltas', ['k', 'g', 'v'], [['a', 2, 30]]);
  assertSameRows((await kv.waitForRows(3)).slice(1), [
    [1, 'args=2 n=1 deltas=1'],
    [2, 'args=2 n=1 deltas=1'],
  ]);
  await kv.cancel();

  // an append stream: process(values) only, as in Proton
  const q = await api.start(`SELECT g, delta_probe(v) FROM ${append} GROUP BY g EMIT ON UPDATE`);
  await api.ingest(append, ['g', 'v'], [[1, 5]]);
  assertSameRows(await q.waitForRows(1), [[1, 'args=1 n=1 deltas=0']]);
  await q.cancel();

  // a historical query: no deltas either
  const h = await api.historical(`SELECT delta_probe(v) FROM table(${append})`);
  assert.deepEqual(h.rows, [['args=1 n=1 deltas=0']]);
});

/**
 * Counts and sums its values; `seen` (not serialized) is how many values the last process() got,
 * `restored` whether the object was deserialized from a kept state.
 */
const FOLD_PROBE = `CREATE AGGREGATE FUNCTION fold_probe(value int32) RETURNS string LANGUAGE JAVASCRIPT AS $$
{
  initialize: function () { this.count = 0; this.sum = 0; this.seen = 0; this.restored = false; },
  process: function (values) {
    this.seen = values.length;
    for (let i = 0; i < values.length; i++) { this.count++; this.sum += values[i]; }
  },
  finalize: function () { return this.count + ' ' + this.sum + ' seen=' + this.seen + (this.restored ? ' restored' : ''); },
  serialize: function () { return JSON.stringify({ count: this.count, sum: this.sum }); },
  deserialize: function (s) { const o = JSON.parse(s); this.count = o.count; this.sum = o.sum; this.restored = true; }
}
$$`;

test('an aggregate defining serialize/deserialize keeps a serialized state: compaction folds the kept values into it', async () => {
  await api.exec(FOLD_PROBE);
  const s = await api.createStream('udf_fold', '(g int8, v int32)');
  const q = await api.start(`SELECT g, fold_probe(v) FROM ${s} GROUP BY g EMIT ON UPDATE`);
  // 70 steps of one row each: the state table is compacted after the 64th step
  for (let i = 1; i <= 70; i++) {
    await api.ingest(s, ['g', 'v'], [[1, i]]);
    await q.waitForRows(i);
  }
  await q.cancel();
  const last = q.rows.map((r) => r[1] as string);
  // before any compaction process() gets every value of the group
  assert.equal(last[62], '63 2016 seen=63');
  // at the 64th step the values are folded into the state: the emit restores it, processes nothing
  assert.equal(last[63], '64 2080 seen=0 restored');
  // afterwards only the values since then are processed, over the restored state
  assert.equal(last[69], '70 2485 seen=6 restored');

  // the same function in a historical query and a tumble window (no compaction: every value)
  const h = await api.historical(`SELECT fold_probe(v) FROM table(${s})`);
  assert.deepEqual(h.rows, [['70 2485 seen=70']]);
});

test('a tumble window over a serialized state: windows compacted while open keep every value', async () => {
  await api.exec(`CREATE AGGREGATE FUNCTION fold_sum(value int32) RETURNS string LANGUAGE JAVASCRIPT AS $$
  { initialize: function () { this.n = 0; this.sum = 0; },
    process: function (v) { for (let i = 0; i < v.length; i++) { this.n++; this.sum += v[i]; } },
    finalize: function () { return this.n + ' ' + this.sum; },
    serialize: function () { return this.n + ',' + this.sum; },
    deserialize: function (s) { const p = s.split(','); this.n = Number(p[0]); this.sum = Number(p[1]); } } $$`);
  const s = await api.createStream('udf_fold_win', "(v int32, ts datetime64(3, 'UTC'))", 'ts');
  // ON UPDATE: each step emits its window's running result, compacted or not
  const q = await api.start(
    `SELECT window_start, fold_sum(v) FROM tumble(${s}, ts, 20s) GROUP BY window_start EMIT ON UPDATE`,
  );
  // 80 steps of one row, one second apart: four 20-second windows, compacted at the 64th step
  const at = (i: number) =>
    new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString().replace('T', ' ').slice(0, 23);
  for (let i = 0; i < 80; i++) {
    await api.ingest(s, ['v', 'ts'], [[i, at(i)]]);
    await q.waitForRows(i + 1);
  }
  await q.cancel();
  const expected = Array.from({ length: 80 }, (_, i) => {
    const from = i - (i % 20);
    return [`${(i % 20) + 1} ${((from + i) * ((i % 20) + 1)) / 2}`];
  });
  assert.deepEqual(
    q.rows.map((r) => [r[1]]),
    expected,
  );
});

test('a materialized view restarts from a checkpoint holding the serialized state', async () => {
  await q.ok('CREATE STREAM udf_fold_mv_src (g int8, v int32)');
  await q.ok(
    'CREATE MATERIALIZED VIEW udf_fold_mv AS SELECT g, fold_probe(v) AS r FROM udf_fold_mv_src GROUP BY g EMIT ON UPDATE',
  );
  const rows = async () => Number((await q.rows('SELECT count() FROM table(udf_fold_mv)'))[0]?.[0]);
  await eventually('the view runs', async () => {
    const mvs = h.trb.services.mvs;
    return mvs.state(mvs.require('default', 'udf_fold_mv')).status === 'ExecutingPipeline';
  });
  for (let i = 1; i <= 66; i++) {
    await q.ingest('udf_fold_mv_src', ['g', 'v'], [[1, i]]);
    await eventually(`view row ${i}`, async () => (await rows()) >= i);
  }
  h = await h.restart();
  await q.ingest('udf_fold_mv_src', ['g', 'v'], [[1, 67]]);
  const latest = async () =>
    String((await q.rows("SELECT r FROM table(udf_fold_mv) WHERE r LIKE '67 %'"))[0]?.[0] ?? '');
  await eventually('the row after the restart', async () => (await latest()) !== '');
  // 67 values, their sum, continued from the state restored after the restart: the checkpoint
  // the view left when it stopped holds the serialized state only, so process() gets the new row
  assert.match(await latest(), /^67 2278 seen=1 restored$/);
});

test('several partial states of a group are combined with merge(), which is then required', async () => {
  await q.ok(`CREATE AGGREGATE FUNCTION merge_probe(value int32) RETURNS string LANGUAGE JAVASCRIPT AS $$
  {
    initialize: function () { this.count = 0; this.sum = 0; },
    process: function (values) { for (let i = 0; i < values.length; i++) { this.count++; this.sum += values[i]; } },
    finalize: function () { return this.count + ' ' + this.sum; },
    serialize: function () { return JSON.stringify({ count: this.count, sum: this.sum }); },
    deserialize: function (s) { const o = JSON.parse(s); this.count = o.count; this.sum = o.sum; },
    merge: function (s) { const o = JSON.parse(s); this.count += o.count; this.sum += o.sum; }
  } $$`);
  // the engine function an emit calls, given two partial states and newer values directly
  const states = `['{"count":1,"sum":5}', '{"count":2,"sum":7}']`;
  const merged = await q.rows(
    `SELECT __trb_uda_merge_probe([to_int32(1), 2], empty_array_int8(), ${states})`,
  );
  assert.deepEqual(merged, [['5 15']]);
  const folded = await q.rows(
    `SELECT __trb_udafold_merge_probe([to_int32(1)], empty_array_int8(), ${states})`,
  );
  assert.deepEqual(folded, [['{"count":4,"sum":13}']]);
  // without merge() two states cannot be combined: the query fails with the reason
  await q.ok(`CREATE AGGREGATE FUNCTION nomerge_probe(value int32) RETURNS int32 LANGUAGE JAVASCRIPT AS $$
  { initialize: function () { this.n = 0; }, process: function (v) { this.n += v.length; },
    finalize: function () { return this.n; }, serialize: function () { return String(this.n); },
    deserialize: function (s) { this.n = Number(s); } } $$`);
  const failed = await q.run(`SELECT __trb_uda_nomerge_probe([to_int32(1)], empty_array_int8(), ${states})`);
  assert.match(failed.body, /"status":"failed"/);
  assert.match(
    failed.body,
    /"code":2533,"message":"JavaScript function nomerge_probe failed: merge\(\) is needed to combine 2 partial states/,
  );
});
