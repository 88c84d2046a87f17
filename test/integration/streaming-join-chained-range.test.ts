/**
 * A range join feeding another (0009_stream_join_stream_case1 id 36): the subquery that range-joins
 * two streams runs as its own query, and the outer range join reads its rows as a stream.
 * Expected rows by hand: `l` row at 15:45:10 meets the `r` rows within 10 s (15:45:00 to 15:45:20),
 * and each joined row meets the `m` row at 15:45:10 (its `ts` is the `l` row's).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually } from '../helpers/sql-calls.ts';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

test('a subquery range-joining two streams, range-joined with a third stream', async () => {
  const l = await api.createStream('rl', '(i int32, s string, ts datetime)');
  const r = await api.createStream('rr', '(ii int32, ss string, tts datetime)');
  const m = await api.createStream('rm', '(iii int32, sss string, ttts datetime)');
  const q = await api.start(
    `SELECT s, ss, sss FROM (SELECT i, s, ss, ts FROM ${l} INNER JOIN ${r} ON i = ii AND date_diff_within(10s, ts, tts)) AS joined INNER JOIN ${m} ON i = iii AND date_diff_within(10s, ts, ttts)`,
  );
  await api.exec(`INSERT INTO ${l} (i, s, ts) VALUES (1, 's', '2022-05-23 15:45:10')`);
  await api.exec(`INSERT INTO ${m} (iii, sss, ttts) VALUES (1, 'sss', '2022-05-23 15:45:10')`);
  await api.exec(
    `INSERT INTO ${r} (ii, ss, tts) VALUES (1, 's1', '2022-05-23 15:44:59'), (1, 's2', '2022-05-23 15:45:00'), (1, 's3', '2022-05-23 15:45:09'), (1, 's4', '2022-05-23 15:45:10'), (1, 's5', '2022-05-23 15:45:15'), (1, 's6', '2022-05-23 15:45:19'), (1, 's7', '2022-05-23 15:45:20'), (1, 's8', '2022-05-23 15:45:21')`,
  );
  await q.waitForRows(6);
  assertSameRows(await q.waitForQuiet(500), [
    ['s', 's2', 'sss'],
    ['s', 's3', 'sss'],
    ['s', 's4', 'sss'],
    ['s', 's5', 'sss'],
    ['s', 's6', 'sss'],
    ['s', 's7', 'sss'],
  ]);
  await q.cancel();
});

test('a chain of three streams with two range joins: the first join feeds the second (0009 case1 id 37)', async () => {
  const l = await api.createStream('rl', '(i int32, s string, ts datetime)');
  const r = await api.createStream('rr', '(ii int32, ss string, tts datetime)');
  const m = await api.createStream('rm', '(iii int32, sss string, ttts datetime)');
  const q = await api.start(
    `SELECT s, b.ss, sss, a.ts FROM ${l} AS a INNER JOIN ${r} AS b ON a.i = b.ii AND date_diff_within(10s, a.ts, b.tts) INNER JOIN ${m} ON i = iii AND date_diff_within(10s, a.ts, ttts)`,
  );
  await api.exec(`INSERT INTO ${l} (i, s, ts) VALUES (1, 's', '2022-05-23 15:45:10')`);
  await api.exec(`INSERT INTO ${m} (iii, sss, ttts) VALUES (1, 'sss', '2022-05-23 15:45:10')`);
  // s1 and s8 are more than 10 s from the l row; s9 has another key. The second range reads the
  // l row's ts (a.ts), 0 s from the m row.
  await api.exec(
    `INSERT INTO ${r} (ii, ss, tts) VALUES (1, 's1', '2022-05-23 15:44:59'), (1, 's2', '2022-05-23 15:45:00'), (1, 's4', '2022-05-23 15:45:10'), (1, 's7', '2022-05-23 15:45:20'), (1, 's8', '2022-05-23 15:45:21'), (2, 's9', '2022-05-23 15:45:10')`,
  );
  await q.waitForRows(3);
  assertSameRows(await q.waitForQuiet(500), [
    ['s', 's2', 'sss', '2022-05-23 15:45:10'],
    ['s', 's4', 'sss', '2022-05-23 15:45:10'],
    ['s', 's7', 'sss', '2022-05-23 15:45:10'],
  ]);
  await q.cancel();
});

test('a range join feeding another: the inner join rows the outer watermark passed are deleted', async () => {
  const l = await api.createStream('rl', '(i int32, s string, ts datetime)');
  const r = await api.createStream('rr', '(ii int32, ss string, tts datetime)');
  const m = await api.createStream('rm', '(iii int32, sss string, ttts datetime)');
  const derivedRows = async () => {
    const c = await api.start(
      "SELECT sum(total_rows) FROM system.tables WHERE database = '_tributary_state' AND startsWith(name, 'd_')",
    );
    await c.waitForEnd();
    return Number(c.rows[0]?.[0] ?? 0);
  };
  const q = await api.start(
    `SELECT count() FROM ${l} AS a INNER JOIN ${r} AS b ON a.i = b.ii AND date_diff_within(10s, a.ts, b.tts) INNER JOIN ${m} ON i = iii AND date_diff_within(10s, a.ts, ttts) GROUP BY a.ts EMIT PERIODIC 100ms`,
  );
  const rows = (table: string, cols: string, time: string, n: number, from = 1) =>
    api.exec(
      `INSERT INTO ${table} ${cols} SELECT number + ${from}, 'x', '2022-05-23 ${time}' FROM numbers(${n})`,
    );
  // 100 keys at 15:00:00 on each side: 100 inner rows, each meeting its m row.
  await rows(l, '(i, s, ts)', '15:00:00', 100);
  await rows(r, '(ii, ss, tts)', '15:00:00', 100);
  await rows(m, '(iii, sss, ttts)', '15:00:00', 100);
  await q.waitForRows(1);
  assert.equal(await derivedRows(), 100);
  // Ten minutes later on every side, twice: the outer watermark passes 15:00:00, whose inner
  // rows can no longer match and are deleted; the new rows still join.
  for (const t of ['15:10:00', '15:10:01']) {
    await rows(l, '(i, s, ts)', t, 1, 1000);
    await rows(r, '(ii, ss, tts)', t, 1, 1000);
    await rows(m, '(iii, sss, ttts)', t, 1, 1000);
  }
  const counts = (await q.waitForRows(4)).map((row) => Number(row[0]));
  assert.deepEqual(counts.slice(0, 1), [100]);
  // A deadline, not a measurement: deletes land with the steps after the watermark moved.
  let left = await derivedRows();
  await eventually(`the inner join's table down to 4 rows (holds ${left})`, async () => {
    left = await derivedRows();
    return left <= 4;
  });
  await q.cancel();
});

test('a streaming subquery joined with a stream without a range is refused (48)', async () => {
  const l = await api.createStream('rl', '(i int32, s string, ts datetime)');
  const r = await api.createStream('rr', '(ii int32, ss string, tts datetime)');
  const m = await api.createStream('rm', '(iii int32, sss string, ttts datetime)');
  const e = await api.startError(
    `SELECT s, ss, sss FROM (SELECT i, s, ss, ts FROM ${l} INNER JOIN ${r} ON i = ii AND date_diff_within(10s, ts, tts)) AS joined INNER JOIN ${m} ON i = iii`,
  );
  assert.equal(e.code, 48, e.message);
});
