/**
 * A streaming aggregation grouped by a qualified column (`GROUP BY a.id`) may name it unqualified
 * in its select list (`SELECT id`), as Proton resolves it: here a window over a stream joined with
 * table() (0018_query_state4_join id 86), where the engine's check answered 215.
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

test('SELECT id ... GROUP BY a.id over a stream joined with table()', async () => {
  const s = await api.createStream('gk', '(id string, value float, ts datetime64(3))');
  const t = await api.createStream('gkt', '(id string, type string)');
  await api.exec(`insert into ${t}(id, type) values ('dev1', 'roof'), ('dev2', 'field')`);
  const q = await api.start(
    `select id, b.type, max(a.value) as m, window_start from tumble(${s}, ts, 5s) as a join table(${t}) as b on a.id = b.id group by a.id, b.type, window_start emit stream`,
  );
  assert.deepEqual(q.header, ['id', 'b.type', 'm', 'window_start']);
  for (const [id, v, ts] of [
    ['dev1', 57.5, '20:00:00'],
    ['dev2', 58.5, '20:00:03'],
    ['dev1', 60, '20:00:04'],
    ['dev2', 1, '20:00:10'],
  ])
    await api.exec(`insert into ${s}(id, value, ts) values ('${id}', ${v}, '2020-02-02 ${ts}')`);
  // The row at 20:00:10 closes the window [20:00:00, 20:00:05): its two groups, hand-computed.
  await q.waitForRows(2);
  assert.deepEqual(
    q.rows.map((r) => JSON.stringify(r)).sort(),
    [
      ['dev1', 'roof', 60, '2020-02-02 20:00:00.000'],
      ['dev2', 'field', 58.5, '2020-02-02 20:00:00.000'],
    ].map((r) => JSON.stringify(r)),
  );
  await q.cancel();
});

test('an unqualified name stays an error when no key or several keys could be it', async () => {
  const s = await api.createStream('gk', '(id string, value float)');
  const t = await api.createStream('gkt', '(id string, type string)');
  const e = await api.startError(
    `select type, max(a.value) from ${s} as a join table(${t}) as b on a.id = b.id group by a.id`,
  );
  assert.deepEqual([e.status, e.code], [400, 215]);
  const both = await api.startError(
    `select id, max(a.value) from ${s} as a join table(${t}) as b on a.id = b.id group by a.id, b.id`,
  );
  assert.deepEqual([both.status, both.code], [400, 215]);
});
