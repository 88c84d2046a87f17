/**
 * group_array over a nested global aggregation answers the arrays of the inner result's current
 * rows, each emit (Proton, 0018_query_state6_view ids 162, 163): an inner group that changes
 * replaces its value, new groups are added; the values come in the order the inner query emitted its
 * current rows (each row's latest `_tp_sn`; Proton 0007_type_and_func_case id 6), several arrays
 * aligned. Also through a view, a subscription and its RECOVER.
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

const inner = (st: string) =>
  `(select id, latest(value_str) as latest_value_str from ${st} group by id order by id)`;

test('group_array over a nested aggregation follows the inner groups as they change', async () => {
  const st = await api.createStream('nga', '(id string, value_str string)');
  const q = await api.start(
    `select emit_version(), group_array(id) as ids, group_array(latest_value_str) as vs from ${inner(st)}`,
  );
  await api.exec(`insert into ${st} (id, value_str) values ('b', '200.1'), ('a', '100.1'), ('c', '300.1')`);
  await q.waitForRows(1);
  await api.exec(`insert into ${st} (id, value_str) values ('c', '400.1'), ('e', '600.1'), ('d', '500.1')`);
  await q.waitForRows(2);
  // Hand-computed: the inner result is {a: 100.1, b: 200.1, c: 300.1}, then c is 400.1 and d, e join.
  assert.deepEqual(q.rows.slice(0, 2), [
    [0, ['a', 'b', 'c'], ['100.1', '200.1', '300.1']],
    [1, ['a', 'b', 'c', 'd', 'e'], ['100.1', '200.1', '400.1', '500.1', '600.1']],
  ]);
  await q.cancel();
});

test('an inner group that changes moves to the end of the arrays, which stay aligned', async () => {
  const st = await api.createStream('nga', '(id string, value_str string)');
  const q = await api.start(
    `select emit_version(), group_array(id) as ids, group_array(latest_value_str) as vs from ${inner(st)}`,
  );
  await api.exec(`insert into ${st} (id, value_str) values ('c', '300.1'), ('a', '100.1'), ('b', '200.1')`);
  await q.waitForRows(1);
  await api.exec(`insert into ${st} (id, value_str) values ('a', '150.1')`);
  await q.waitForRows(2);
  await api.exec(`insert into ${st} (id, value_str) values ('d', '050.1'), ('b', '250.1')`);
  await q.waitForRows(3);
  // Hand-computed: the inner query emits a, b, c (ORDER BY id); then its new row of a; then those
  // of b and d (ORDER BY id). The values follow the latest emitted row of each group, not the ids
  // nor the values.
  assert.deepEqual(q.rows.slice(0, 3), [
    [0, ['a', 'b', 'c'], ['100.1', '200.1', '300.1']],
    [1, ['b', 'c', 'a'], ['200.1', '300.1', '150.1']],
    [2, ['c', 'a', 'b', 'd'], ['300.1', '150.1', '250.1', '050.1']],
  ]);
  await q.cancel();
});

test('through a subquery that filters and projects the inner rows, the emitted order is kept', async () => {
  const st = await api.createStream('nga', '(id string, value_str string)');
  const q = await api.start(
    `select group_array(id) as ids, group_array(v) as vs from (select id, latest_value_str as v from ${inner(st)} where id != 'z')`,
  );
  await api.exec(`insert into ${st} (id, value_str) values ('c', '300.1'), ('a', '100.1'), ('z', '0.1')`);
  await q.waitForRows(1);
  await api.exec(`insert into ${st} (id, value_str) values ('a', '150.1'), ('b', '200.1')`);
  await q.waitForRows(2);
  // Hand-computed: z filtered out; a's new row is emitted with b's (ORDER BY id: a, then b).
  assert.deepEqual(q.rows.slice(0, 2), [
    [
      ['a', 'c'],
      ['100.1', '300.1'],
    ],
    [
      ['c', 'a', 'b'],
      ['300.1', '150.1', '200.1'],
    ],
  ]);
  await q.cancel();
});

test('through a view, subscribed and recovered, the arrays go on from the checkpoint', async () => {
  const st = await api.createStream('nga', '(id string, value_str string)');
  const view = `${st}_v`;
  await api.exec(
    `create view ${view} as select emit_version(), group_array(id) as ids, group_array(latest_value_str) as vs, map_cast(ids, vs) as m from ${inner(st)}`,
  );
  const q = await api.start(`subscribe to select * from ${view} settings checkpoint_interval=1`);
  await api.exec(`insert into ${st} (id, value_str) values ('a', '100.1'), ('b', '200.1'), ('c', '300.1')`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows[0], [
    0,
    ['a', 'b', 'c'],
    ['100.1', '200.1', '300.1'],
    { a: '100.1', b: '200.1', c: '300.1' },
  ]);
  await q.cancel();
  await api.exec(`insert into ${st} (id, value_str) values ('c', '400.1'), ('d', '500.1'), ('e', '600.1')`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows[0], [
    1,
    ['a', 'b', 'c', 'd', 'e'],
    ['100.1', '200.1', '400.1', '500.1', '600.1'],
    { a: '100.1', b: '200.1', c: '400.1', d: '500.1', e: '600.1' },
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
