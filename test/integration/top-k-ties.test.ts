/**
 * top_k(x, k) pairs in a streaming aggregation: among equal counts the item that reached its count
 * first (its last row earliest) comes first, as Proton's single space-saving state orders them,
 * whatever order partial states merge in, and after a RECOVER (0018_query_state1_func id 31, 0008
 * ids 0, 12).
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

test('ties in count: the item that reached the count first comes first, across inserts', async () => {
  const st = await api.createStream('tk', '(id string)');
  const q = await api.start(`select top_k(id, 2) from ${st} emit periodic 100ms`);
  await q.waitForScanned(0);
  const insert = async (...ids: string[]) => {
    await api.exec(`insert into ${st}(id) values ${ids.map((i) => `('${i}')`).join(', ')}`);
  };
  const until = async (expected: unknown) => {
    for (;;) {
      const rows = await q.waitForRows(q.rows.length + 1);
      if (JSON.stringify(rows.at(-1)) === JSON.stringify(expected)) return;
    }
  };
  // y reaches 2 (row 3) before x (row 4), though x came first; both before z's 1.
  await insert('x', 'y', 'y');
  await until([
    [
      ['y', 2],
      ['x', 1],
    ],
  ]);
  await insert('x');
  await until([
    [
      ['y', 2],
      ['x', 2],
    ],
  ]);
  // In another insert (another partial state): z reaches 2, after y and x did.
  await insert('z', 'z');
  await until([
    [
      ['y', 2],
      ['x', 2],
    ],
  ]);
  await insert('y');
  await until([
    [
      ['y', 3],
      ['x', 2],
    ],
  ]);
  assert.deepEqual(q.header, ['top_k(id, 2)']);
  await q.cancel();
});

test('a recovered top_k keeps the tie order of rows read on either side of the RECOVER (state1_func 31)', async () => {
  const st = await api.createStream('tk', '(id string)');
  const q = await api.start(
    `subscribe to select top_k(id, 2) from ${st} emit periodic 100ms settings checkpoint_interval=1`,
  );
  await api.exec(`insert into ${st}(id) values ('dev1'), ('dev1'), ('dev2')`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows.at(-1), [
    [
      ['dev1', 2],
      ['dev2', 1],
    ],
  ]);
  await q.cancel();
  await api.exec(`insert into ${st}(id) values ('dev4'), ('dev8'), ('dev8')`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows.at(-1), [
    [
      ['dev1', 2],
      ['dev8', 2],
    ],
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});

test('ties reached within one insert keep the order of its rows (0008 id 0)', async () => {
  const st = await api.createStream('tk', '(i int)');
  const q = await api.start(`select top_k(i, 3, true) from ${st} limit 1`);
  await q.waitForScanned(0);
  // One insert: 5, 5, 4, 4, 3, 3, 2, 2, 9, 9, 9: 5 reaches 2 first, then 4; 9 leads with 3.
  await api.exec(`insert into ${st}(i) values (5), (5), (4), (4), (3), (3), (2), (2), (9), (9), (9)`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows[0], [
    [
      [9, 3],
      [5, 2],
      [4, 2],
    ],
  ]);
});

test('top_k through a CTE runs; over a versioned_kv stream it is refused as before (the tie rule needs the stream itself)', async () => {
  const st = await api.createStream('tk', '(id string)');
  const q = await api.start(`with c as (select id from ${st} where id != 'skip') select top_k(id, 2) from c`);
  await q.waitForScanned(0);
  await api.exec(`insert into ${st}(id) values ('a'), ('b'), ('b'), ('skip'), ('skip'), ('skip')`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows.at(-1), [
    [
      ['b', 2],
      ['a', 1],
    ],
  ]);
  await q.cancel();
  const kv = await api.createStream('tkv', "(k int, id string) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  // top_k cannot retract: refused as before, naming top_k (not the tie rule's second aggregate).
  const refused = await api.startError(`select top_k(id, 1) from ${kv}`);
  assert.equal(refused.code, 48);
  assert.match(refused.message, /^top_k\(\) cannot retract/);
});
