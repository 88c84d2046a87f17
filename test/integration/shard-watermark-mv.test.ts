/**
 * A materialized view with a window over a stream with several shards: its per-shard watermarks
 * survive a restart (0018 state11; shard-watermark.test.ts has the query-level cases).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

test('a window view over a sharded stream keeps its per-shard watermarks across a restart', async () => {
  const h = await startHarness();
  let current = h;
  const q = new SqlCalls(() => current);
  try {
    await q.ok("CREATE STREAM sh_mv_src (i int64, ts datetime64(3, 'UTC')) SETTINGS shards = 2");
    await q.ok(
      'CREATE MATERIALIZED VIEW sh_mv AS SELECT to_unix_timestamp(window_start) AS ws, count() AS c, sum(i) AS total FROM tumble(sh_mv_src, ts, 5s) GROUP BY window_start',
    );
    const BASE = Date.UTC(2024, 0, 1);
    const put = (i: number, s: number) =>
      q.ingest('sh_mv_src', ['i', 'ts'], [[i, new Date(BASE + s * 1000).toISOString()]]);
    const sql = 'SELECT ws, c, total FROM table(sh_mv) ORDER BY ws';
    const base = BASE / 1000;
    const mvs = () => current.trb.services.mvs;
    await eventually(
      'sh_mv running',
      async () => mvs().state(mvs().require('default', 'sh_mv')).status === 'ExecutingPipeline',
    );
    await put(1, 1); // shard 0: watermark 0
    await put(2, 12); // shard 1: watermark 10; the minimum stays 0
    await eventually(
      'the view read both inserts',
      async () =>
        (mvs().state(mvs().require('default', 'sh_mv')).sources['default.sh_mv_src']?.processedSn ?? -1) >= 1,
    );
    assert.equal((await q.rows(sql)).length, 0, 'shard 0 holds [0, 5) open');
    current = await current.restart();
    // The turn starts at shard 0 again: shard 0 -> 10, and with shard 1's 10 (from the view's
    // checkpoint, or read again with the shards its rows keep) the minimum reaches 10: [0, 5)
    // closes now (it would not if shard 1's watermark were lost).
    await put(3, 13);
    await eventually('[0, 5) closed', async () => (await q.rows(sql)).length === 1);
    await put(4, 21); // shard 1 -> 20; shard 0 holds at 10
    await put(5, 22); // shard 0 -> 20: [10, 15) closes
    await eventually('[10, 15) closed', async () => (await q.rows(sql)).length === 2);
    assert.deepEqual(
      (await q.rows(sql)).map((r) => r.map(Number)),
      [
        [base, 1, 1],
        [base + 10, 2, 2 + 3],
      ],
    );
  } finally {
    await current.close();
  }
});
