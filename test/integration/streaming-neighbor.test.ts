/**
 * `neighbor(x, -n[, default])` in a streaming query: as in Proton, the value n rows earlier across
 * inserts (what `lag(x, n[, default])` answers), the default before there is one; also in a
 * subscribed query, whose RECOVER goes on from the rows read before its checkpoint
 * (0018_query_state1_func ids 42, 43).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api?.close();
});

test('neighbor() with a negative offset reads earlier rows across inserts', async () => {
  const st = await api.createStream('nb', '(id string, value int)');
  const q = await api.start(
    `select value, neighbor(value, -1) as prev_1, neighbor(value, -3, -7) as prev_3 from ${st}`,
  );
  await api.exec(`insert into ${st}(id, value) values ('a', 1)`);
  await q.waitForRows(1);
  await api.exec(`insert into ${st}(id, value) values ('a', 2), ('b', 3)`);
  await q.waitForRows(3);
  await api.exec(`insert into ${st}(id, value) values ('c', 4)`);
  await q.waitForRows(4);
  // Hand-computed: prev_1 is the row before (0, the int default, for the first); prev_3 the row
  // three back (-7, the given default, for the first three).
  assert.deepEqual(q.rows, [
    [1, 0, -7],
    [2, 1, -7],
    [3, 2, -7],
    [4, 3, 1],
  ]);
  await q.cancel();
});

test('a subscribed neighbor() query recovers with the rows read before its checkpoint', async () => {
  const st = await api.createStream('nb', '(id string, value int)');
  const q = await api.start(
    `subscribe to select value, neighbor(value, -1) as prev_1, neighbor(value, -3, 0) from ${st} settings checkpoint_interval=1`,
  );
  for (const v of [1, 2, 3]) await api.exec(`insert into ${st}(id, value) values ('d', ${v})`);
  await q.waitForRows(3);
  assert.deepEqual(q.rows, [
    [1, 0, 0],
    [2, 1, 0],
    [3, 2, 0],
  ]);
  await q.cancel();
  for (const v of [4, 5, 6]) await api.exec(`insert into ${st}(id, value) values ('d', ${v})`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(3);
  assert.deepEqual(r.rows, [
    [4, 3, 1],
    [5, 4, 2],
    [6, 5, 3],
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
