/**
 * Proton's `monotonic(n)` (src/sql/translator/monotonic-call.ts): n, n + 1, ... (int64) per row in
 * the order rows pass; historical queries number their rows, a streaming tail continues across
 * steps, a random stream's DEFAULT counts the stream's generated rows in step with `_tp_sn`, which
 * starts at 1 as in Proton. A non-integer or non-constant argument is BAD_ARGUMENTS (36).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
  await api.exec('CREATE STREAM mono_s (id int, v int)');
});
after(async () => {
  await api.close();
});

async function historical(sql: string) {
  const q = await api.start(sql);
  await q.waitForEnd();
  return q;
}

test('historical: monotonic(n) numbers the rows from n, as int64', async () => {
  const q = await historical('SELECT number, monotonic(5) FROM numbers(3)');
  assert.deepEqual(q.rows, [
    [0, 5],
    [1, 6],
    [2, 7],
  ]);
  assert.equal(q.info.result.header[1]?.type, 'int64');
  assert.equal(q.info.result.header[1]?.name, 'monotonic(5)');
  assert.deepEqual((await historical('SELECT monotonic(-2) FROM numbers(2)')).rows, [[-2], [-1]]);
});

test('monotonic needs one constant integer: 36 for 1.0, a string or a column', async () => {
  for (const sql of [
    "SELECT monotonic('1')",
    'SELECT monotonic(1.0)',
    'SELECT monotonic(number) FROM numbers(2)',
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.status, 400, sql);
    assert.equal(e.code, 36, `${sql}: ${e.message}`);
    assert.match(e.message, /monotonic/);
  }
});

test('streaming tail: the count continues across steps', async () => {
  const q = await api.start('SELECT id, monotonic(100) AS m FROM mono_s WHERE v > 0');
  assert.equal(q.info.result.header[1]?.type, 'int64');
  await api.exec('INSERT INTO mono_s (id, v) VALUES (1, 1), (2, 0), (3, 1)');
  await q.waitForRows(2);
  await api.exec('INSERT INTO mono_s (id, v) VALUES (4, 1)');
  await q.waitForRows(3);
  assert.deepEqual(q.rows, [
    [1, 100],
    [3, 101],
    [4, 102],
  ]);
  await q.cancel();
});

test('monotonic in a streaming aggregation is refused with a clear error', async () => {
  const e = await api.startError('SELECT count(), monotonic(1) FROM mono_s');
  assert.equal(e.status, 400);
  assert.match(e.message, /monotonic\(\) is supported in streaming queries without aggregation/);
});

test('random stream: monotonic DEFAULT and _tp_sn count the generated rows from n and from 1', async () => {
  await api.exec(
    'CREATE RANDOM STREAM mono_r (id int DEFAULT monotonic(2), value int) SETTINGS eps = 100, interval_time = 20',
  );
  const q = await api.start('SELECT id, _tp_sn FROM mono_r LIMIT 30');
  await q.waitForEnd();
  assert.deepEqual(
    q.rows,
    Array.from({ length: 30 }, (_, i) => [i + 2, i + 1]),
  );
  // table(r) is a fresh batch: numbered from the start again.
  const t = await historical('SELECT id, _tp_sn FROM table(mono_r) LIMIT 3');
  assert.deepEqual(t.rows, [
    [2, 1],
    [3, 2],
    [4, 3],
  ]);
});

test('SUBSCRIBE / RECOVER: the monotonic count resumes from the checkpoint', async () => {
  await api.exec('CREATE STREAM mono_sub (id int)');
  const q = await api.start(
    'SUBSCRIBE TO SELECT id, monotonic(100) FROM mono_sub SETTINGS checkpoint_interval = 1',
  );
  await api.exec('INSERT INTO mono_sub (id) VALUES (1)');
  await q.waitForRows(1);
  await q.cancel();
  await api.exec('INSERT INTO mono_sub (id) VALUES (2)');
  const r = await api.start(`RECOVER FROM '${q.id}'`);
  await r.waitForRows(1);
  await api.exec('INSERT INTO mono_sub (id) VALUES (3)');
  await r.waitForRows(2);
  assert.deepEqual(q.rows, [[1, 100]]);
  assert.deepEqual(r.rows, [
    [2, 101],
    [3, 102],
  ]);
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});

test('SUBSCRIBE over a random stream: RECOVER continues after the rows read before', async () => {
  await api.exec(
    'CREATE RANDOM STREAM mono_rsub (id int DEFAULT monotonic(1)) SETTINGS eps = 100, interval_time = 20',
  );
  const q = await api.start('SUBSCRIBE TO SELECT id, _tp_sn FROM mono_rsub SETTINGS checkpoint_interval = 1');
  await q.waitForRows(5);
  await q.cancel();
  const seen = q.rows.length;
  assert.deepEqual(
    q.rows,
    Array.from({ length: seen }, (_, i) => [i + 1, i + 1]),
  );
  const r = await api.start(`RECOVER FROM '${q.id}'`);
  await r.waitForRows(3);
  await r.cancel();
  // No row twice: the recovered query starts after the last row its checkpoint saw.
  const first = r.rows[0] as [number, number];
  assert.ok(first[1] > seen, `recovered from ${JSON.stringify(first)} after ${seen} rows`);
  assert.ok(
    r.rows.every((row, i) => row[1] === first[1] + i && row[0] === row[1]),
    JSON.stringify(r.rows),
  );
  await api.exec(`UNSUBSCRIBE TO '${q.id}'`);
});
