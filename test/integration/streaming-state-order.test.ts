/**
 * Order-dependent aggregates of a streaming aggregation (`group_array`, `latest`) merge a group's
 * partial states in the order they were folded: many folds, a compaction, a RECOVER from a
 * checkpoint copy of the state (state-table.ts IN_FOLD_ORDER; 0018_query_state1_func id 37,
 * state6_view id 162).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api?.close();
});

test('group_array and latest follow the fold order across many folds and a RECOVER', async () => {
  const st = await api.createStream('ord', '(i int)');
  const q = await api.start(
    `subscribe to select group_array(i) as xs, latest(i) as last from ${st} emit periodic 50ms settings checkpoint_interval=1`,
  );
  const expected: number[] = [];
  // One fold per insert: each insert waits for the emit that includes it.
  for (let i = 1; i <= 24; i++) {
    await api.exec(`insert into ${st}(i) values (${i})`);
    expected.push(i);
    await q.waitForRows(i);
  }
  assert.deepEqual(q.rows.at(-1), [expected, 24]);
  await q.cancel();
  await api.exec(`insert into ${st}(i) values (25)`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows.at(-1), [[...expected, 25], 25]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
