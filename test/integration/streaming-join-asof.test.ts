/**
 * Append stream ASOF / LATEST JOIN append stream through the REST API (Proton's HashJoin cases 5
 * and 7, streaming-sql-notes.md §1.9): a dynamic enrichment. Only left rows make output; the right
 * side keeps its last `keep_versions` rows per join key (ASOF) or its last row per key (LATEST),
 * among the rows it received since the query started.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi, type StreamingQuery } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

async function settled(q: StreamingQuery, count: number): Promise<unknown[][]> {
  if (count > 0) await q.waitForRows(count);
  return q.waitForQuiet(count > 0 ? 400 : 800);
}

test('ASOF JOIN of two append streams: the closest of the last keep_versions right rows of the key', async () => {
  const l = await api.createStream('al', '(i int32, s string)');
  const r = await api.createStream('ar', '(ii int32, ss string)');
  // Before the query: not part of the right side (the query reads r from its start).
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (100, 's1')`);
  const sql = `FROM ${l} ASOF JOIN ${r} ON s = ss AND i < ii SETTINGS keep_versions=2`;
  const inner = await api.start(`SELECT i, ii, s ${sql}`);
  const leftJ = await api.start(`SELECT i, ii, s ${sql.replace('ASOF JOIN', 'LEFT ASOF JOIN')}`);
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 's1'), (2, 's1'), (3, 's3')`);
  // Right rows alone make no output.
  assert.equal((await inner.waitForQuiet(500)).length, 0);
  // s1 keeps 1, 2; s3 keeps 3: 0 -> 1 (the smallest ii above 0), 2 -> 3, 5 -> none (100 came
  // before the query).
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (0, 's1'), (2, 's3'), (5, 's1')`);
  await inner.waitForRows(2);
  await leftJ.waitForRows(3);
  // s1 now keeps 2, 4 (1 is beyond keep_versions); s3 keeps 3, 6: 0 -> 2, 4 -> 6.
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (4, 's1'), (6, 's3')`);
  await inner.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (0, 's1'), (4, 's3')`);
  assertSameRows(await settled(inner, 4), [
    [0, 1, 's1'],
    [2, 3, 's3'],
    [0, 2, 's1'],
    [4, 6, 's3'],
  ]);
  assertSameRows(await settled(leftJ, 5), [
    [0, 1, 's1'],
    [2, 3, 's3'],
    [5, 0, 's1'],
    [0, 2, 's1'],
    [4, 6, 's3'],
  ]);
  await inner.cancel();
  await leftJ.cancel();
});

test('LATEST JOIN of two append streams: the last right row of the key when the left row comes', async () => {
  const l = await api.createStream('al', '(i int32, s string)');
  const r = await api.createStream('ar', '(ii int32, ss string)');
  const inner = await api.start(`SELECT i, ii FROM ${l} LATEST JOIN ${r} ON s = ss`);
  const leftJ = await api.start(`SELECT i, ii FROM ${l} LEFT LATEST JOIN ${r} ON ${l}.s = ${r}.ss`);
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (1, 'a'), (2, 'a'), (3, 'b')`);
  assert.equal((await inner.waitForQuiet(500)).length, 0);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (10, 'a'), (20, 'b'), (30, 'c')`);
  await inner.waitForRows(2);
  await leftJ.waitForRows(3);
  await api.exec(`INSERT INTO ${r} (ii, ss) VALUES (4, 'a')`);
  await inner.waitForQuiet(300);
  await api.exec(`INSERT INTO ${l} (i, s) VALUES (40, 'a'), (50, 'b')`);
  assertSameRows(await settled(inner, 4), [
    [10, 2],
    [20, 3],
    [40, 4],
    [50, 3],
  ]);
  assertSameRows(await settled(leftJ, 5), [
    [10, 2],
    [20, 3],
    [30, 0],
    [40, 4],
    [50, 3],
  ]);
  await inner.cancel();
  await leftJ.cancel();
});

test('ASOF on string columns answers 169 (0009 case1 id 28); other shapes are refused with 48', async () => {
  const l = await api.createStream('al', '(i int32, s string)');
  const r = await api.createStream('ar', '(ii int32, ss string)');
  const bad = await api.startError(`SELECT s, ss FROM ${l} ASOF JOIN ${r} ON i = ii AND s > ss`);
  assert.equal(bad.code, 169, bad.message);
  for (const sql of [
    // The right side through a CTE: its join keys are not the stream's columns.
    `WITH rr AS (SELECT ii + 1 AS k, ss FROM ${r}) SELECT i, ss FROM ${l} LATEST JOIN rr ON i = rr.k`,
    // An equal key computed on the right side.
    `SELECT i, ii FROM ${l} LATEST JOIN ${r} ON s = lower(ss)`,
  ]) {
    const e = await api.startError(sql);
    assert.equal(e.code, 48, `${sql}: ${e.message}`);
  }
});
