/**
 * A comparison between the two sides of a join's ON (not ASOF) is refused with 403, as Proton
 * refuses it (0009_stream_join_stream_case1 id 30), where the engine would run it; the same
 * comparison on one side, or in an ASOF join, still runs.
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

test('ON i = ii AND ts < tts between table() sides: 403 with what to write instead', async () => {
  const l = await api.createStream('l', '(i int32, s string, ts datetime64(3))');
  const r = await api.createStream('r', '(ii int32, ss string, tts datetime64(3))');
  await api.exec(
    `INSERT INTO ${l} (i, s, ts) VALUES (1, 'a', '2024-01-01 00:00:01'), (2, 'b', '2024-01-01 00:00:05')`,
  );
  await api.exec(
    `INSERT INTO ${r} (ii, ss, tts) VALUES (1, 'x', '2024-01-01 00:00:03'), (2, 'y', '2024-01-01 00:00:03')`,
  );
  for (const sql of [
    `SELECT s, ss FROM table(${l}) AS a JOIN table(${r}) AS b ON i = ii AND ts < tts`,
    `SELECT s, ss FROM table(${l}) AS a LEFT JOIN table(${r}) AS b ON a.i = b.ii AND b.tts >= a.ts`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.status, 400, e.message);
    assert.equal(e.code, 403, e.message);
    assert.match(e.message, /equalities only/);
  }
  // Moved to WHERE, it runs: only (1, a) has ts < tts.
  const q = await api.start(
    `SELECT s, ss FROM table(${l}) AS a JOIN table(${r}) AS b ON i = ii WHERE ts < tts`,
  );
  await q.waitForEnd();
  assert.deepEqual(q.rows, [['a', 'x']]);
  // A comparison reading one side is a filter of the join: it runs.
  const one = await api.start(
    `SELECT s, ss FROM table(${l}) AS a JOIN table(${r}) AS b ON i = ii AND ts > to_datetime64('2024-01-01 00:00:02', 3) ORDER BY s`,
  );
  await one.waitForEnd();
  assert.deepEqual(one.rows, [['b', 'y']]);
  // ASOF takes the inequality: each left row meets the right row of its key with the largest tts <= ts.
  const asof = await api.start(
    `SELECT s, ss FROM table(${l}) AS a ASOF JOIN table(${r}) AS b ON i = ii AND ts >= tts ORDER BY s`,
  );
  await asof.waitForEnd();
  assert.deepEqual(asof.rows, [['b', 'y']]);
});
