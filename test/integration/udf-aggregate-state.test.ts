/**
 * What a plain JavaScript aggregate's process() gets beside its values: the deltas of its rows
 * over a changelog input (Proton's `_tp_delta`, +1 per live row here), nothing over an append
 * stream or in a historical query.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

/** Answers what process() was given: how many calls had deltas, their sum, and the values' count. */
const DELTA_PROBE = `CREATE AGGREGATE FUNCTION delta_probe(value int32) RETURNS string LANGUAGE JAVASCRIPT AS $$
{
  initialize: function () { this.args = -1; this.n = 0; this.sum = 0; },
  process: function (values, deltas) {
    this.args = arguments.length;
    this.n += values.length;
    if (deltas !== undefined) for (let i = 0; i < deltas.length; i++) this.sum += deltas[i];
  },
  finalize: function () { return 'args=' + this.args + ' n=' + this.n + ' deltas=' + this.sum; }
}
$$`;

test('process() gets the deltas after the values over a changelog input, and no deltas otherwise', async () => {
  await api.exec(DELTA_PROBE);
  await api.exec(
    "CREATE STREAM udf_kv_deltas (k string, g int8, v int32) PRIMARY KEY k SETTINGS mode='versioned_kv'",
  );
  const append = await api.createStream('udf_append_deltas', '(g int8, v int32)');

  // a versioned_kv stream read as a stream is a changelog: each update retracts the key's row
  const kv = await api.start('SELECT g, delta_probe(v) FROM udf_kv_deltas GROUP BY g EMIT ON UPDATE');
  await api.ingest(
    'udf_kv_deltas',
    ['k', 'g', 'v'],
    [
      ['a', 1, 10],
      ['b', 1, 20],
    ],
  );
  assertSameRows(await kv.waitForRows(1), [[1, 'args=2 n=2 deltas=2']]);
  // 'a' moves to group 2: group 1 keeps one live row (its delta +1), group 2 gets one
  await api.ingest('udf_kv_deltas', ['k', 'g', 'v'], [['a', 2, 30]]);
  assertSameRows((await kv.waitForRows(3)).slice(1), [
    [1, 'args=2 n=1 deltas=1'],
    [2, 'args=2 n=1 deltas=1'],
  ]);
  await kv.cancel();

  // an append stream: process(values) only, as in Proton
  const q = await api.start(`SELECT g, delta_probe(v) FROM ${append} GROUP BY g EMIT ON UPDATE`);
  await api.ingest(append, ['g', 'v'], [[1, 5]]);
  assertSameRows(await q.waitForRows(1), [[1, 'args=1 n=1 deltas=0']]);
  await q.cancel();

  // a historical query: no deltas either
  const h = await api.historical(`SELECT delta_probe(v) FROM table(${append})`);
  assert.deepEqual(h.rows, [['args=1 n=1 deltas=0']]);
});
