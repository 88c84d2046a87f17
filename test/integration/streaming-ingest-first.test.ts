/**
 * Ingest first (issue 12): streaming steps run on the engine's `stream` sessions, so commits never
 * queue behind them; a query that fell behind catches up and its lag shows in its pipeline.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually } from '../helpers/sql-calls.ts';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
  await api.exec('CREATE STREAM first_s (i int64)');
});
after(() => api.close());

test('commits land while every streaming session is busy; the query catches up afterwards', async () => {
  const query = await api.start('SELECT i FROM first_s');
  const engine = api.h.trb.services.engine;
  // Hold every `stream` session (2 by default) with a statement of about 6 s; note when the first
  // of them lets its session go.
  let released = false;
  const blockers = Promise.all(
    [0, 1].map(() =>
      engine
        .query('SELECT sleepEachRow(1) FROM numbers(6) SETTINGS max_block_size = 1', { lane: 'stream' })
        .finally(() => {
          released = true;
        }),
    ),
  );
  await eventually('both stream sessions busy', async () => engine.load().running >= 2, 5_000);
  await api.ingest('first_s', ['i'], [[1], [2], [3]]);
  assert.equal(released, false, 'the commit did not wait for the streaming sessions');
  const stats = async () => {
    const r = await api.get(`/v1beta2/queries/${query.id}/pipeline`);
    const p = (await r.json()) as { nodes: Array<{ name: string; metric: Record<string, number> }> };
    return p.nodes.find((n) => n.name === 'Source default.first_s')?.metric;
  };
  const committed = api.h.trb.services.streams.committedSn('default', 'first_s');
  // While the sessions are held the query cannot step: the committed rows show as its lag.
  const behind = await stats();
  assert.equal(behind?.committed_sn, committed);
  if (!released) assert.equal(behind?.lag, 3);
  // The step waits for a `stream` session: its rows arrive only once a blocker let one go.
  assert.deepEqual(await query.waitForRows(3), [[1], [2], [3]]);
  assert.equal(released, true, 'the step ran on a stream session');
  await blockers;
  await eventually('caught up', async () => (await stats())?.lag === 0);
  await query.cancel();
});
