/**
 * Streaming reads of the stream modes through the REST API (streaming-sql-notes.md §1.2):
 * a versioned_kv or changelog_kv stream first sends its latest row per key (all history before the
 * query, compacted; deleted keys left out), then its changes as they come; a changelog stream passes
 * `_tp_delta` through. Cases of Proton's 0014_versioned_kv_join.json id 0 and
 * 0013_changelog_stream.json ids 0, 1.
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

test('versioned_kv: the latest row per key first, then every new row (0014 id 0)', async () => {
  const vk = await api.createStream('vk', "(i int32, s string) PRIMARY KEY s SETTINGS mode='versioned_kv'");
  await api.exec(`INSERT INTO ${vk} (i, s) VALUES (1, 'a')`);
  await api.exec(`INSERT INTO ${vk} (i, s) VALUES (2, 'b')`);
  await api.exec(`INSERT INTO ${vk} (i, s) VALUES (2, 'a'), (3, 'b'), (4, 'c')`);
  const q = await api.start(`SELECT i, s FROM ${vk}`);
  // a -> 2, b -> 3, c -> 4 (the older versions 1/a and 2/b are not sent).
  assertSameRows(await q.settle(3), [
    [2, 'a'],
    [3, 'b'],
    [4, 'c'],
  ]);
  await api.exec(`INSERT INTO ${vk} (i, s) VALUES (5, 'd'), (6, 'c')`);
  assertSameRows((await q.settle(5)).slice(3), [
    [5, 'd'],
    [6, 'c'],
  ]);
  await q.cancel();
});

test('changelog_kv: the compacted state without deleted keys, then the changes with _tp_delta', async () => {
  const kv = await api.createStream('ckv', "(i int32, s string) PRIMARY KEY s SETTINGS mode='changelog_kv'");
  await api.exec(`INSERT INTO ${kv} (i, s) VALUES (1, 'a'), (2, 'b')`);
  await api.exec(
    `INSERT INTO ${kv} (i, s, _tp_delta) VALUES (1, 'a', -1), (2, 'b', -1), (3, 'b', 1), (4, 'c', 1)`,
  );
  const q = await api.start(`SELECT i, s, _tp_delta FROM ${kv}`);
  // a is deleted; b -> 3, c -> 4.
  assertSameRows(await q.settle(2), [
    [3, 'b', 1],
    [4, 'c', 1],
  ]);
  await api.exec(`INSERT INTO ${kv} (i, s) VALUES (5, 'd')`);
  await q.waitForRows(3);
  await api.exec(`INSERT INTO ${kv} (i, s, _tp_delta) VALUES (4, 'c', -1)`);
  assert.deepEqual((await q.settle(4)).slice(2), [
    [5, 'd', 1],
    [4, 'c', -1],
  ]);
  await q.cancel();
});

test('changelog: rows stream with their _tp_delta, nothing before the start', async () => {
  const cl = await api.createStream('cl', "(i int32) SETTINGS mode='changelog'");
  await api.exec(`INSERT INTO ${cl} (i) VALUES (7)`);
  const q = await api.start(`SELECT i, _tp_delta FROM ${cl}`);
  await api.exec(`INSERT INTO ${cl} (i) VALUES (1)`);
  await q.waitForRows(1);
  await api.exec(`INSERT INTO ${cl} (i, _tp_delta) VALUES (1, -1)`);
  assert.deepEqual(await q.settle(2), [
    [1, 1],
    [1, -1],
  ]);
  await q.cancel();
});

test('a streaming aggregation over a kv stream answers what table() answers (retractions, streaming-retract.test.ts)', async () => {
  const vk = await api.createStream(
    'vk_agg',
    "(i int32, s string) PRIMARY KEY s SETTINGS mode='versioned_kv'",
  );
  await api.exec(`INSERT INTO ${vk} (i, s) VALUES (1, 'a'), (2, 'b')`);
  await api.exec(`INSERT INTO ${vk} (i, s) VALUES (5, 'a')`);
  // The bounded form answers the current state: a -> 5, b -> 2.
  const r = await api.post('/v1beta2/exec', {
    sql: `SELECT count(), sum(i) FROM table(${vk})`,
    type: 'historical',
  });
  assert.equal(r.status, 200);
  const doc = (await r.json()) as { data: unknown[][] };
  assert.deepEqual(
    doc.data.map((row) => row.map(Number)),
    [[2, 7]],
  );
  // The streaming aggregation starts from the same state.
  const q = await api.start(`SELECT count(), sum(i) FROM ${vk} EMIT PERIODIC 200ms`);
  assert.deepEqual(await q.settle(1), [[2, 7]]);
  await q.cancel();
});
