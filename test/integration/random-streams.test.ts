/**
 * CREATE RANDOM STREAM through the REST API: historical reads answer a fresh batch (one second's
 * worth, or `max_events`), streaming reads see rows generated while they run (the count grows), a
 * tumble window over a random stream emits, DEFAULT expressions and random_in_type shape the
 * values, bad settings are refused with the setting named, and DROP STREAM removes it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

async function historical(sql: string): Promise<unknown[][]> {
  const q = await api.start(sql);
  await q.waitForEnd();
  return q.rows;
}

test('table(random stream) answers one batch of eps rows, or max_events rows; DEFAULTs and random_in_type shape them', async () => {
  await api.exec(
    "CREATE RANDOM STREAM rs_batch (id int DEFAULT rand() % 4, k uint8 DEFAULT random_in_type('uint8', 5, x -> to_uint8(x + 10)), s string, d decimal(9, 4)) SETTINGS eps = 250",
  );
  assert.deepEqual(await historical('SELECT count() FROM table(rs_batch)'), [[250]]);
  assert.deepEqual(await historical('SELECT count() FROM table(rs_batch) SETTINGS max_events = 37'), [[37]]);
  const [row] = await historical(
    'SELECT min(id), max(id), min(k), max(k), count(DISTINCT s) > 1 FROM table(rs_batch)',
  );
  assert.ok(row);
  assert.ok(Number(row[0]) >= 0 && Number(row[1]) <= 3, `id in 0..3: ${JSON.stringify(row)}`);
  assert.ok(Number(row[2]) >= 10 && Number(row[3]) <= 14, `k in 10..14: ${JSON.stringify(row)}`);
  assert.ok(row[4] === true || row[4] === 1 || row[4] === '1', `strings vary: ${JSON.stringify(row)}`);
});

test('a streaming read sees generated rows arrive while it runs', async () => {
  await api.exec(
    'CREATE RANDOM STREAM rs_tail (id int DEFAULT rand() % 4) SETTINGS eps = 200, interval_time = 50',
  );
  const q = await api.start('SELECT id, _tp_time FROM rs_tail');
  const rows = await q.waitForRows(300);
  assert.ok(rows.every((r) => Number(r[0]) >= 0 && Number(r[0]) <= 3));
  await q.cancel();
});

test('SETTINGS max_events bounds a streaming read: it answers that many rows and ends', async () => {
  await api.exec('CREATE RANDOM STREAM rs_bounded (id int, ip ipv4, ip6 ipv6) SETTINGS eps = 10');
  const rows = await historical('SELECT ip, ip6 FROM rs_bounded SETTINGS max_events = 3');
  assert.equal(rows.length, 3);
  assert.deepEqual(await historical('SELECT count() FROM rs_bounded SETTINGS max_events = 42'), [[42]]);
});

test('a tumble window over a random stream emits closed windows', async () => {
  await api.exec('CREATE RANDOM STREAM rs_win (id int DEFAULT rand() % 4) SETTINGS eps = 100');
  const q = await api.start(
    'SELECT window_start, count() AS c FROM tumble(rs_win, 1s) GROUP BY window_start',
  );
  const rows = await q.waitForRows(2);
  assert.ok(
    rows.every((r) => Number(r[1]) > 0),
    JSON.stringify(rows),
  );
  await q.cancel();
});

test('a join of a random stream with table(random stream) runs', async () => {
  await api.exec('CREATE RANDOM STREAM rs_left (id int DEFAULT rand() % 4) SETTINGS eps = 100');
  await api.exec('CREATE RANDOM STREAM rs_right (id int DEFAULT rand() % 4, name string) SETTINGS eps = 50');
  const q = await api.start(
    'SELECT l.id, r.name FROM rs_left AS l INNER JOIN table(rs_right) AS r ON l.id = r.id',
  );
  const rows = await q.waitForRows(10);
  assert.ok(rows.length >= 10);
  await q.cancel();
});

test('bad settings name the setting; DROP STREAM removes a random stream', async () => {
  const zero = await api.startError('CREATE RANDOM STREAM rs_bad (id int) SETTINGS interval_time = 0');
  assert.equal(zero.code, 471);
  assert.match(zero.message, /interval_time/);
  const big = await api.startError(
    'CREATE RANDOM STREAM rs_bad (id int) SETTINGS eps = 10, interval_time = 15000',
  );
  assert.equal(big.code, 471);
  const unknown = await api.startError('CREATE RANDOM STREAM rs_bad (id int) SETTINGS epz = 10');
  assert.equal(unknown.code, 115);
  assert.match(unknown.message, /epz/);
  assert.equal((await api.startError('SELECT * FROM table(rs_bad)')).code, 60);

  await api.exec('CREATE RANDOM STREAM rs_gone (id int)');
  assert.deepEqual(await historical('SELECT count() FROM table(rs_gone)'), [[1000]]);
  await api.exec('DROP STREAM rs_gone');
  assert.equal((await api.startError('SELECT * FROM table(rs_gone)')).code, 60);
  await api.exec('CREATE RANDOM STREAM rs_gone (id int) SETTINGS eps = 3');
  assert.deepEqual(await historical('SELECT count() FROM table(rs_gone)'), [[3]]);
});

test('RENAME of a random stream is refused; after DROP DATABASE the name is an ordinary stream again', async () => {
  await api.exec('CREATE DATABASE rs_db');
  await api.exec('CREATE RANDOM STREAM rs_db.r (id int) SETTINGS eps = 5');
  assert.deepEqual(await historical('SELECT count() FROM table(rs_db.r)'), [[5]]);
  const rename = await api.startError('RENAME STREAM rs_db.r TO rs_db.r2');
  assert.equal(rename.code, 48);
  assert.match(rename.message, /random stream/);
  await api.exec('DROP DATABASE rs_db');
  await api.exec('CREATE DATABASE rs_db');
  await api.exec('CREATE STREAM rs_db.r (id int)');
  assert.deepEqual(await historical('SELECT count() FROM table(rs_db.r)'), [[0]], 'not generated any more');
});

test('_tp_shard: with shards = n the generated rows go to the n shards in turn; * does not show it', async () => {
  await api.exec(
    'CREATE RANDOM STREAM rs_shard (id int DEFAULT monotonic(2), value int) SETTINGS eps = 10, shards = 10, interval_time = 20',
  );
  // A historical batch (eps rows) has one row of each shard; INSERT ... SELECT reads the same batch.
  await api.exec('CREATE STREAM rs_shard_copy (shard int)');
  await api.exec('INSERT INTO rs_shard_copy (shard) SELECT _tp_shard FROM rs_shard LIMIT 10');
  assert.deepEqual(
    await historical('SELECT shard FROM table(rs_shard_copy) ORDER BY shard'),
    Array.from({ length: 10 }, (_, i) => [i]),
  );
  const star = await api.start('SELECT * FROM table(rs_shard) LIMIT 1');
  await star.waitForEnd();
  assert.deepEqual(star.header, ['id', 'value', '_tp_time']);
  // A streaming read: _tp_sn from 1, _tp_shard = (_tp_sn - 1) % shards, monotonic(2) in step.
  await api.exec(
    'CREATE RANDOM STREAM rs_one (id int DEFAULT monotonic(2), value int) SETTINGS eps = 50, shards = 1',
  );
  const one = await api.start('SELECT id, _tp_sn, _tp_shard FROM rs_one LIMIT 5');
  await one.waitForEnd();
  assert.deepEqual(one.rows, [
    [2, 1, 0],
    [3, 2, 0],
    [4, 3, 0],
    [5, 4, 0],
    [6, 5, 0],
  ]);
  const q = await api.start('SELECT _tp_sn, _tp_shard FROM rs_shard LIMIT 12');
  await q.waitForEnd();
  assert.deepEqual(
    q.rows,
    Array.from({ length: 12 }, (_, i) => [i + 1, i % 10]),
  );
});
