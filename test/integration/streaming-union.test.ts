/**
 * Streaming UNION (Proton keeps every row of each branch): an ad-hoc streaming query, and a
 * materialized view whose branches each run durably with a store of their own and write into one
 * target as producers of their own, exactly once across a restart.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually } from '../helpers/sql-calls.ts';
import { StreamingApi, sorted } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api?.close();
});

const rowsOf = async (sql: string) => (await api.historical(sql)).rows;

test('an ad-hoc streaming UNION emits the rows of every branch', async () => {
  const st = await api.createStream('un', '(i int, k string)');
  const q = await api.start(
    `select i, k from ${st} where i < 10 union select i * 100, 'big' from ${st} where i >= 10`,
  );
  assert.deepEqual(q.header, ['i', 'k']);
  await api.exec(`insert into ${st}(i, k) values (1, 'a'), (20, 'b'), (3, 'c')`);
  await q.waitForRows(3);
  assert.deepEqual(
    sorted(q.rows),
    sorted([
      [1, 'a'],
      [3, 'c'],
      [2000, 'big'],
    ]),
  );
  await q.cancel();
  const distinct = await api.startError(`select i from ${st} union distinct select i from ${st}`);
  assert.deepEqual([distinct.status, distinct.code], [400, 48]);
});

test('a materialized view over a UNION writes every branch into its target, exactly once across a restart', async () => {
  const st = await api.createStream('unmv', '(i int)');
  await api.exec(
    `create materialized view ${st}_mv as (select i, 'low' as side from ${st} where i < 100 union select i, 'high' as side from ${st} where i >= 100)`,
  );
  const target = `select i, side from table(${st}_mv) order by i`;
  // Several inserts, so the branches' journals run apart (each keeps its own tags).
  for (const values of ['(1), (200)', '(2)', '(3)', '(300), (400)', '(4)'])
    await api.exec(`insert into ${st}(i) values ${values}`);
  const expected = [
    [1, 'low'],
    [2, 'low'],
    [3, 'low'],
    [4, 'low'],
    [200, 'high'],
    [300, 'high'],
    [400, 'high'],
  ];
  await eventually('both branches written', async () => (await rowsOf(target)).length === expected.length);
  assert.deepEqual(await rowsOf(target), expected);
  const h2 = await api.h.restart();
  api = await StreamingApi.attach(h2);
  await api.exec(`insert into ${st}(i) values (5), (500)`);
  await eventually(
    'rows after the restart',
    async () => (await rowsOf(target)).length === expected.length + 2,
  );
  assert.deepEqual(await rowsOf(target), [
    ...expected.slice(0, 4),
    [5, 'low'],
    ...expected.slice(4),
    [500, 'high'],
  ]);
  await api.exec(`drop view ${st}_mv`);
});
