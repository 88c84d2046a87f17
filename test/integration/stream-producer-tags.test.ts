import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/catalog/audit.ts';
import { PRODUCER_SIDECAR } from '../../src/stream/producer-marks.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { count, createStream, rows } from '../helpers/streams.ts';

let h: Harness;

before(async () => {
  h = await startHarness();
});

after(() => h.close());

/** One tagged write of rows `[v]` by producer `mv`; answers how many rows it wrote. */
async function write(stream: string, values: number[], seq: number, part = 0): Promise<number> {
  const r = await h.trb.services.streams.ingest(
    'default',
    stream,
    { columns: ['v'], rows: values.map((v) => [v]) },
    { producer: { id: 'mv', tag: { seq, part } } },
  );
  return r.count;
}

test('a replayed producer tag is dropped, also after a restart', async () => {
  await createStream(h, { name: 'tagged', columns: [{ name: 'v', type: 'int32' }] });
  assert.equal(await write('tagged', [1, 2], 1), 2);
  assert.equal(await write('tagged', [1, 2], 1), 0);
  assert.equal(await write('tagged', [3], 2), 1);
  assert.deepEqual(h.trb.services.streams.lastProducerTag('default', 'tagged', 'mv'), { seq: 2, part: 0 });
  h = await h.restart();
  assert.deepEqual(h.trb.services.streams.lastProducerTag('default', 'tagged', 'mv'), { seq: 2, part: 0 });
  assert.equal(await write('tagged', [3], 2), 0);
  assert.equal(await write('tagged', [1, 2], 1), 0);
  assert.equal(await write('tagged', [4], 3), 1);
  assert.deepEqual(await rows(h, 'SELECT v FROM default.tagged ORDER BY _tp_sn'), [[1], [2], [3], [4]]);
});

test('producer marks outlive the WAL segments retention deletes (sidecar), and another restart', async () => {
  await createStream(h, {
    name: 'retained',
    columns: [{ name: 'v', type: 'int32' }],
    logstore_retention_ms: 1,
  });
  assert.equal(await write('retained', [1], 5), 1);
  assert.equal(await write('retained', [2], 6), 1);
  // Every row in the historical store, then retention seals and deletes every segment that has rows.
  await h.trb.services.streams.flush('default', 'retained');
  await h.trb.services.streams.maintain(Date.now() + 60_000);
  const dir = join(h.dataDir, 'streams', 'default', 'retained');
  const files = await readdir(dir);
  assert.ok(files.includes(PRODUCER_SIDECAR), files.join(', '));
  for await (const f of files.filter((x) => x.endsWith('.wal.idx'))) assert.fail(`segment ${f} kept`);
  h = await h.restart();
  assert.deepEqual(h.trb.services.streams.lastProducerTag('default', 'retained', 'mv'), { seq: 6, part: 0 });
  assert.equal(await write('retained', [2], 6), 0);
  assert.equal(await write('retained', [3], 7), 1);
  assert.equal(await count(h, 'retained'), 3);
});

test('a memory stream keeps marks while the process runs (it is empty after a restart anyway)', async () => {
  await h.trb.services.streams.create(
    { name: 'scratch', storageType: 'memory', columns: [{ name: 'v', type: 'int32' }] },
    SYSTEM_ACTOR,
  );
  assert.equal(await write('scratch', [1], 1), 1);
  assert.equal(await write('scratch', [1], 1), 0);
  h = await h.restart();
  assert.equal(h.trb.services.streams.lastProducerTag('default', 'scratch', 'mv'), undefined);
  assert.equal(await count(h, 'scratch'), 0);
});
