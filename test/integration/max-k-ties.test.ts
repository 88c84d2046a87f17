/**
 * max_k(x, k, context...) with equal x: the smaller context first, in historical and streaming
 * queries alike, whatever the order the rows were merged in (0018_query_state1_func id 35: 66
 * 'dev1' before a RECOVER and 66 'dev8' after it; Proton keeps 'dev1').
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

test('historical max_k: ties on the value keep the smaller context first', async () => {
  const st = await api.createStream('mk', '(id string, value int)');
  await api.exec(
    `insert into ${st}(id, value) values ('dev8', 66), ('dev1', 57), ('dev1', 66), ('dev2', 58)`,
  );
  const r = await api.historical(`select max_k(value, 2, id), max_k(value, 3) from table(${st})`);
  assert.deepEqual(r.rows, [
    [
      [
        [66, 'dev1'],
        [66, 'dev8'],
      ],
      [66, 66, 58],
    ],
  ]);
  await api.exec(`insert into ${st}(id, value) values ('dev4', 80)`);
  const r2 = await api.historical(`select max_k(value, 2, id) from table(${st})`);
  assert.deepEqual(r2.rows, [
    [
      [
        [80, 'dev4'],
        [66, 'dev1'],
      ],
    ],
  ]);
});

test('a recovered max_k keeps the smaller context among equal values read on either side of the RECOVER', async () => {
  const st = await api.createStream('mk', '(id string, value int)');
  const q = await api.start(
    `subscribe to select max_k(value, 2, id) from ${st} emit periodic 100ms settings checkpoint_interval=1`,
  );
  await api.exec(`insert into ${st}(id, value) values ('dev1', 57), ('dev1', 66), ('dev2', 58)`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows.at(-1), [
    [
      [66, 'dev1'],
      [58, 'dev2'],
    ],
  ]);
  await q.cancel();
  await api.exec(`insert into ${st}(id, value) values ('dev4', 80), ('dev8', 55), ('dev8', 66)`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows.at(-1), [
    [
      [80, 'dev4'],
      [66, 'dev1'],
    ],
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
