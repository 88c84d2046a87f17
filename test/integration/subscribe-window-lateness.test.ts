/**
 * A window aggregation recovered after rows were committed while it was away reads them insert by
 * insert, as Proton does: a row late against the watermark an earlier insert of the same catch-up
 * raised is dropped (0018 state3_window 74, 75).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi, sorted } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api?.close();
});

/** One insert (one commit) of `[i, second]` rows, event time 2020-02-02 20:00:00 + second. */
async function insert(st: string, rows: Array<[number, number]>): Promise<void> {
  const values = rows.map(([i, s]) => `(${i}, '2020-02-02 20:00:${String(s).padStart(2, '0')}')`).join(', ');
  await api.exec(`insert into ${st}(i, ts) values ${values}`);
}

test('RECOVER takes the inserts committed while away one by one: rows late against an earlier one are dropped', async () => {
  const st = await api.createStream('wl', "(i int, ts datetime64(3, 'UTC'))");
  const q = await api.start(
    `subscribe to select window_start, count() as c, sum(i) as total from tumble(${st}, ts, 5s) group by window_start settings checkpoint_interval=1`,
  );
  await insert(st, [[1, 0]]);
  await insert(st, [[2, 10]]); // closes [0, 5)
  await q.waitForRows(1);
  assert.deepEqual(
    q.rows.map((r) => [String(r[0]), r[1], r[2]]),
    [['2020-02-02 20:00:00.000', 1, 1]],
  );
  await q.cancel();
  await insert(st, [
    [3, 20],
    [4, 21],
    [5, 22],
  ]); // watermark 20: closes [10, 15)
  await insert(st, [
    [6, 23],
    [7, 22],
    [8, 28],
  ]); // watermark 25: closes [20, 25)
  await insert(st, [
    [9, 20],
    [10, 21],
    [11, 25],
  ]); // 9 and 10 are late
  await insert(st, [
    [12, 23],
    [13, 22],
    [14, 28],
  ]); // 12 and 13 are late
  await insert(st, [[15, 40]]); // watermark 40: closes [25, 30)
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(3);
  assert.deepEqual(sorted(r.rows.map((row) => [String(row[0]), row[1], row[2]])), [
    ['2020-02-02 20:00:10.000', 1, 2],
    ['2020-02-02 20:00:20.000', 5, 3 + 4 + 5 + 6 + 7],
    ['2020-02-02 20:00:25.000', 3, 8 + 11 + 14],
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
