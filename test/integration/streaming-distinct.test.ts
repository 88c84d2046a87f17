/**
 * Streaming `SELECT DISTINCT` without aggregation: each distinct row once, ever, across inserts
 * (Proton keeps the rows its DistinctTransform let through), `EMIT PERIODIC` accepted; in a
 * subscribed query the rows seen are part of the checkpoint, so a RECOVER sends only new ones
 * (0018_query_state ids 14, 15).
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

const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

test('SELECT DISTINCT sends each distinct row once across inserts, after WHERE', async () => {
  const st = await api.createStream('dist', '(id string, v int)');
  const q = await api.start(`select distinct id, v > 10 as big from ${st} where id != 'x'`);
  await api.exec(`insert into ${st}(id, v) values ('a', 1), ('a', 2), ('x', 1), ('b', 20)`);
  await q.waitForRows(2);
  // 'a' small again and 'x' (filtered out) are not new; 'a' big and 'c' are.
  await api.exec(`insert into ${st}(id, v) values ('a', 3), ('x', 2), ('a', 30), ('c', 5)`);
  await q.waitForRows(4);
  await api.exec(`insert into ${st}(id, v) values ('b', 21), ('c', 6)`);
  // A marker row proves the insert above was read and sent nothing.
  await api.exec(`insert into ${st}(id, v) values ('z', 0)`);
  await q.waitForRows(5);
  assert.deepEqual(q.rows, [
    ['a', false],
    ['b', true],
    ['a', true],
    ['c', false],
    ['z', false],
  ]);
  await q.cancel();
});

test('a subscribed SELECT DISTINCT ... EMIT PERIODIC keeps the rows it sent across RECOVER', async () => {
  const st = await api.createStream('dist', '(id string, location string, value float)');
  const q = await api.start(
    `subscribe to select distinct(id) from ${st} emit periodic 1s settings checkpoint_interval=1`,
  );
  await api.exec(
    `insert into ${st}(id, location, value) values ('dev1', 'ca', 57.3), ('dev1', 'ca', 66), ('dev2', 'ca', 58.3)`,
  );
  await q.waitForRows(2);
  assert.deepEqual(q.header, ['id']);
  assert.deepEqual(sorted(q.rows), ['["dev1"]', '["dev2"]']);
  await q.cancel();
  await api.exec(
    `insert into ${st}(id, location, value) values ('dev2', 'ca', 80), ('dev8', 'ca', 55), ('dev8', 'ca', 77)`,
  );
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  await api.exec(`insert into ${st}(id, location, value) values ('dev1', 'ca', 1), ('dev9', 'ca', 2)`);
  await r.waitForRows(2);
  assert.deepEqual(r.rows, [['dev8'], ['dev9']]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
