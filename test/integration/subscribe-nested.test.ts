/**
 * Checkpointed queries over nested streaming queries (a view or subquery that aggregates a
 * stream): each nested query runs durably with its own store nested in the subscription's, its
 * derived rows saved with its checkpoints, so RECOVER continues the nested state and the outer
 * query where they were, also after a server restart; UNSUBSCRIBE removes the nested stores too.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CHECKPOINT_DB } from '../../src/streaming/checkpoint/checkpoint-tables.ts';
import { eventually } from '../helpers/sql-calls.ts';
import { StreamingApi, sorted } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api?.close();
});

/** One insert of `[k, i, second]` rows, event time 2020-02-02 20:00:00 + second. */
async function insert(st: string, rows: Array<[string, number, number]>): Promise<void> {
  const values = rows
    .map(([k, i, s]) => `('${k}', ${i}, '2020-02-02 20:00:${String(s).padStart(2, '0')}')`)
    .join(', ');
  await api.exec(`insert into ${st}(k, i, ts) values ${values}`);
}

const savedTables = async () =>
  Number(
    (await api.historical(`SELECT count() FROM system.tables WHERE database = '${CHECKPOINT_DB}'`))
      .rows[0]?.[0],
  );

test('a subscription over a view that aggregates a stream keeps the view state across RECOVER', async () => {
  const st = await api.createStream('nst', "(k string, i int, ts datetime64(3, 'UTC'))");
  await api.exec(
    `create view ${st}_v as select k, sum(i) as total, window_start as ws from tumble(${st}, ts, 5s) group by k, window_start`,
  );
  const tablesBefore = await savedTables();
  const q = await api.start(`subscribe to select * from ${st}_v settings checkpoint_interval=1`);
  await insert(st, [['a', 1, 0]]);
  await insert(st, [['a', 2, 2]]);
  await insert(st, [['b', 4, 4]]);
  await insert(st, [['b', 8, 8]]); // closes [0, 5)
  await q.waitForRows(2);
  assert.deepEqual(sorted(q.rows.map((r) => r.slice(0, 2))), [
    ['a', 3],
    ['b', 4],
  ]);
  await q.cancel();
  // The nested query's checkpoint keeps only derived rows the outer checkpoint has not processed.
  const savedOutput = await api.historical(
    `SELECT count(), sum(total_rows) FROM system.tables WHERE database = '${CHECKPOINT_DB}' AND endsWith(name, '__output')`,
  );
  assert.deepEqual(savedOutput.rows[0]?.map(Number), [1, 0]);
  // Committed while the query is away; b's 8 at 08 s is in the view's saved window state.
  await insert(st, [['c', 16, 6]]);
  await insert(st, [['c', 32, 7]]);
  await insert(st, [['d', 64, 11]]); // closes [5, 10)
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(2);
  // Nothing of before the checkpoint again, and the window holds the rows of both runs.
  await insert(st, [['e', 128, 20]]); // closes [10, 15): d 64
  await r.waitForRows(3);
  assert.deepEqual(sorted(r.rows.map((row) => [row[0], row[1], String(row[2])])), [
    ['b', 8, '2020-02-02 20:00:05.000'],
    ['c', 48, '2020-02-02 20:00:05.000'],
    ['d', 64, '2020-02-02 20:00:10.000'],
  ]);
  await r.cancel();
  assert.ok((await savedTables()) > tablesBefore, 'the nested query saved its tables');
  await api.exec(`unsubscribe to '${q.id}'`);
  assert.equal(await savedTables(), tablesBefore, 'UNSUBSCRIBE drops the nested stores too');
});

test('a subscription over an aggregating subquery recovers after a server restart', async () => {
  const st = await api.createStream('nst', "(k string, i int, ts datetime64(3, 'UTC'))");
  const q = await api.start(
    `subscribe to select k, c from (select k, count() as c from ${st} group by k emit periodic 100ms) where c > 1 settings checkpoint_interval=1`,
  );
  await insert(st, [
    ['a', 1, 0],
    ['a', 2, 1],
    ['b', 3, 2],
  ]);
  await q.waitForRows(1);
  assert.deepEqual(q.rows[0], ['a', 2]);
  const h2 = await api.h.restart();
  api = await StreamingApi.attach(h2);
  await insert(st, [['b', 4, 3]]);
  const r = await api.start(`recover from '${q.id}'`);
  // The nested count goes on from its checkpoint: b reaches 2 only with the row before the restart.
  await r.waitForRows(1);
  assert.ok(
    r.rows.some((row) => row[0] === 'b' && row[1] === 2),
    JSON.stringify(r.rows),
  );
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});

test('a subscription joining a table() snapshot through a view joins the same snapshot after RECOVER', async () => {
  const st = await api.createStream('nsnap', "(k string, i int, ts datetime64(3, 'UTC'))");
  const dim = await api.createStream('ndim', '(k string, kind string)');
  await api.exec(`insert into ${dim}(k, kind) values ('a', 'roof'), ('b', 'field')`);
  await api.exec(
    `create view ${st}_jv as select s.k as k, d.kind as kind, s.i as i from ${st} as s join table(${dim}) as d on s.k = d.k`,
  );
  const q = await api.start(`subscribe to select k, kind, i from ${st}_jv settings checkpoint_interval=1`);
  await insert(st, [['a', 1, 0]]);
  await q.waitForRows(1);
  assert.deepEqual(q.rows, [['a', 'roof', 1]]);
  await q.cancel();
  // Rows added to the dimension after the first run read it are not in its snapshot.
  await api.exec(`insert into ${dim}(k, kind) values ('a', 'wall'), ('c', 'floor')`);
  await insert(st, [
    ['b', 2, 1],
    ['c', 3, 2],
  ]);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  await insert(st, [['a', 4, 3]]);
  await r.waitForRows(2);
  assert.deepEqual(sorted(r.rows), [
    ['a', 'roof', 4],
    ['b', 'field', 2],
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});

test('a materialized view over a view that aggregates a stream writes each window once across a restart', async () => {
  const st = await api.createStream('nmv', "(k string, i int, ts datetime64(3, 'UTC'))");
  await api.exec(
    `create view ${st}_agg as select k, sum(i) as total, window_start as ws from tumble(${st}, ts, 5s) group by k, window_start`,
  );
  await api.exec(`create materialized view ${st}_mv as select k, total, ws from ${st}_agg`);
  const target = `select k, total, to_string(ws) from table(${st}_mv) order by ws, k`;
  const rowsOf = async () => (await api.historical(target)).rows;
  await insert(st, [['a', 1, 0]]);
  await insert(st, [['b', 2, 6]]); // closes [0, 5)
  await eventually('[0, 5) written', async () => (await rowsOf()).length === 1);
  assert.deepEqual(await rowsOf(), [['a', 1, '2020-02-02 20:00:00.000']]);
  // The view's window [5, 10) holds b's row in the nested query's state across the restart.
  const h2 = await api.h.restart();
  api = await StreamingApi.attach(h2);
  await insert(st, [['b', 4, 7]]);
  await insert(st, [['c', 8, 12]]); // closes [5, 10)
  await eventually('[5, 10) written', async () => (await rowsOf()).length === 2);
  assert.deepEqual(await rowsOf(), [
    ['a', 1, '2020-02-02 20:00:00.000'],
    ['b', 6, '2020-02-02 20:00:05.000'],
  ]);
  await api.exec(`drop view ${st}_mv`);
});
