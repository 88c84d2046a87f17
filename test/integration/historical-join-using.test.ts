/**
 * Historical queries run with the engine settings of src/queries/historical-settings.ts: `USING k`
 * may name a select alias of the left side, as in Proton.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('JOIN ... USING a select alias of the left side', async () => {
  const r = await h.call('POST', '/v1beta2/queries', {
    body: {
      sql: 'SELECT number AS k, j FROM numbers(3) AS l ANY LEFT JOIN (SELECT number AS k, number * 10 AS j FROM numbers(2)) AS r USING k ORDER BY k',
    },
  });
  assert.equal(r.statusCode, 200, r.body);
  const rows = r.body
    .split('\n')
    .filter((l) => l.startsWith('data: ['))
    .flatMap((l) => JSON.parse(l.slice(6)) as unknown[][]);
  assert.deepEqual(rows, [
    [0, 0],
    [1, 10],
    [2, 0],
  ]);
});
