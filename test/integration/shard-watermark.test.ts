/**
 * Streams with several shards (`SETTINGS shards=N`): each insert goes to the next shard in turn,
 * `_tp_shard` says which, and a window over such a stream closes only when every shard's
 * watermark has passed its end (Proton finalizes at the smallest shard watermark; 0018 state11
 * id 307). Rows are late against their own shard's watermark. SUBSCRIBE / RECOVER keep the
 * per-shard watermarks in the checkpoint.
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

const at = (s: number) => `'2020-02-02 20:00:${String(s).padStart(2, '0')}'`;

/** One insert (one commit, hence one shard) of `[i, second]` rows. */
async function insert(st: string, rows: Array<[number, number]>): Promise<void> {
  await api.exec(`insert into ${st}(i, ts) values ${rows.map(([i, s]) => `(${i}, ${at(s)})`).join(', ')}`);
}

async function sharded(prefix: string, shards: number): Promise<string> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 8)}`;
  await api.exec(`create stream ${name} (i int, ts datetime) settings shards=${shards}`);
  return name;
}

test('inserts go to the shards in turn; _tp_shard reads them back, * does not show it; the node counts the shards', async () => {
  const totalShards = async () =>
    ((await (await api.get('/v1beta2/cluster')).json()) as Array<{ total_shards: number }>)[0]?.total_shards;
  const before = await totalShards();
  const st = await sharded('sh_rr', 3);
  assert.equal(await totalShards(), (before ?? 0) + 3, "the node hosts the new stream's 3 shards");
  for (let k = 0; k < 5; k++) await insert(st, [[k, k]]);
  const { rows } = await api.historical(`select i, _tp_shard from table(${st}) order by i`);
  assert.deepEqual(
    rows.map((r) => [Number(r[0]), Number(r[1])]),
    [
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 0],
      [4, 1],
    ],
  );
  const star = await api.historical(`select * from table(${st}) order by i limit 1`);
  assert.ok(!star.header.some((h) => h.name === '_tp_shard'), 'SELECT * does not show _tp_shard');
  // ALTER STREAM keeps the shards of the rows so far; the turn goes on.
  await api.exec(`alter stream ${st} add column note string`);
  await insert(st, [[5, 5]]);
  await api.exec(`alter stream ${st} drop column note`);
  const after = await api.historical(`select i, _tp_shard from table(${st}) where i >= 3 order by i`);
  assert.deepEqual(
    after.rows.map((r) => [Number(r[0]), Number(r[1])]),
    [
      [3, 0],
      [4, 1],
      [5, 2],
    ],
  );
});

test('a tumble window stays open until every shard has passed its end', async () => {
  const st = await sharded('sh_tumble', 3);
  const q = await api.start(
    `select window_start, count() as c, sum(i) as s from tumble(${st}, ts, 5s) group by window_start`,
  );
  await insert(st, [[1, 1]]); // shard 0: watermark 20:00:00
  await insert(st, [[2, 2]]); // shard 1
  await insert(st, [[3, 11]]); // shard 2: watermark 20:00:10; shard 0 still at 20:00:00
  await insert(st, [[4, 12]]); // shard 0 -> 20:00:10; shard 1 holds [0, 5) and [5, 10) open
  await q.waitForQuiet(500);
  assert.equal(q.rows.length, 0, 'shard 1 has not passed 20:00:05');
  await insert(st, [[5, 7]]); // shard 1 -> 20:00:05: [0, 5) closes
  await q.waitForRows(1);
  await insert(st, [[6, 3]]); // shard 2: 3 < its watermark 20:00:10, late (dropped)
  await insert(st, [[7, 16]]); // shard 0 -> 20:00:15
  await insert(st, [[8, 15]]); // shard 1 -> 20:00:15; min is 20:00:10 (shard 2): [5, 10) closes
  await q.waitForRows(2);
  await q.waitForQuiet(300);
  assert.deepEqual(
    q.rows.map((r) => [String(r[0]), Number(r[1]), Number(r[2])]),
    [
      ['2020-02-02 20:00:00', 2, 1 + 2],
      ['2020-02-02 20:00:05', 1, 5],
    ],
  );
  await q.cancel();
});

test('a shard that got no row holds every window open', async () => {
  const st = await sharded('sh_idle2', 4);
  const q = await api.start(
    `select window_start, count() as c from tumble(${st}, ts, 5s) group by window_start`,
  );
  await insert(st, [[1, 1]]);
  await insert(st, [[2, 20]]);
  await insert(st, [[3, 21]]); // shard 3 has no row: nothing closes
  await q.waitForQuiet(500);
  assert.equal(q.rows.length, 0);
  await insert(st, [[4, 30]]); // shard 3 -> 20:00:30; min is 20:00:00 (shard 0): nothing closes yet
  await q.waitForQuiet(300);
  assert.equal(q.rows.length, 0);
  await insert(st, [[5, 22]]); // shard 0 -> 20:00:20: [0, 5) closes
  await q.waitForRows(1);
  assert.deepEqual(
    q.rows.map((r) => [String(r[0]), Number(r[1])]),
    [['2020-02-02 20:00:00', 1]],
  );
  await q.cancel();
});

test('RECOVER keeps the per-shard watermarks of the checkpoint (hop, 0018 state11 id 307 shape)', async () => {
  const st = await sharded('sh_hop', 3);
  const q = await api.start(
    `subscribe to select i, count() as c, window_start from hop(${st}, ts, 3s, 5s) group by i, window_start settings checkpoint_interval=1`,
  );
  await insert(st, [
    [1, 1],
    [2, 2],
  ]); // shard 0
  await insert(st, [
    [3, 3],
    [1, 4],
  ]); // shard 1
  await insert(st, [
    [2, 5],
    [3, 6],
  ]); // shard 2
  await insert(st, [[1, 7]]); // shard 0 -> 20:00:05
  await insert(st, [[2, 8]]); // shard 1 -> 20:00:08
  await insert(st, [[3, 9]]); // shard 2 -> 20:00:08; min 20:00:05: windows ending 20:00:02 and :05
  await q.waitForRows(4);
  await q.waitForQuiet(500);
  assert.deepEqual(sorted(q.rows.map((r) => [Number(r[0]), Number(r[1]), String(r[2])])), [
    [1, 1, '2020-02-02 19:59:57'],
    [1, 2, '2020-02-02 20:00:00'],
    [2, 1, '2020-02-02 20:00:00'],
    [3, 1, '2020-02-02 20:00:00'],
  ]);
  await q.cancel();
  await insert(st, [[1, 10]]); // shard 0 -> 20:00:08
  await insert(st, [[2, 11]]); // shard 1 -> 20:00:11
  await insert(st, [[3, 12]]); // shard 2 -> 20:00:11; min 20:00:08: [20:00:03, 20:00:08) closes
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(3);
  await r.waitForQuiet(500);
  assert.deepEqual(sorted(r.rows.map((row) => [Number(row[0]), Number(row[1]), String(row[2])])), [
    [1, 2, '2020-02-02 20:00:03'],
    [2, 1, '2020-02-02 20:00:03'],
    [3, 2, '2020-02-02 20:00:03'],
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
