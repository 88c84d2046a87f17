import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { StreamSpec } from '../../src/stream/define-stream.ts';
import { historicalSource, rangeSelect } from '../../src/stream/stream-reads.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { count, ingestCompact, ingestRaw, rows } from '../helpers/streams.ts';

let h: Harness;
const ADMIN = { id: 'admin', name: 'admin' };

before(async () => {
  h = await startHarness();
});

after(() => h.close());

async function create(spec: StreamSpec) {
  return (await h.trb.services.streams.create(spec, ADMIN)).value;
}

function latest(name: string, select: string, order: string): Promise<unknown[][]> {
  const def = h.trb.services.streams.require('default', name).value;
  return rows(h, `SELECT ${select} FROM ${historicalSource(def)} AS t ORDER BY ${order}`);
}

test('versioned_kv: history is append-only, the historical source keeps the latest row per key', async () => {
  await create({
    name: 'vkv',
    mode: 'versioned_kv',
    primaryKey: 'k',
    columns: [
      { name: 'k', type: 'int32' },
      { name: 's', type: 'string' },
    ],
  });
  await ingestCompact(
    h,
    'vkv',
    ['k', 's'],
    [
      [1, 'a'],
      [2, 'b'],
    ],
  );
  await ingestCompact(
    h,
    'vkv',
    ['k', 's'],
    [
      [2, 'a'],
      [3, 'b'],
      [4, 'c'],
    ],
  );
  assert.equal(await count(h, 'vkv'), 5);
  assert.deepEqual(await latest('vkv', 'k, s', 'k'), [
    [1, 'a'],
    [2, 'a'],
    [3, 'b'],
    [4, 'c'],
  ]);
  // version_column decides (largest wins), the later row breaks ties.
  await create({
    name: 'vkv2',
    mode: 'versioned_kv',
    primaryKey: 'k',
    versionColumn: 'ver',
    columns: [
      { name: 'k', type: 'int32' },
      { name: 'ver', type: 'int32' },
      { name: 's', type: 'string' },
    ],
  });
  await ingestCompact(
    h,
    'vkv2',
    ['k', 'ver', 's'],
    [
      [1, 5, 'newest'],
      [1, 3, 'older'],
      [2, 1, 'first'],
      [2, 1, 'second'],
    ],
  );
  assert.deepEqual(await latest('vkv2', 'k, ver, s', 'k'), [
    [1, 5, 'newest'],
    [2, 1, 'second'],
  ]);
});

test('changelog_kv: keys whose latest _tp_delta is -1 are gone', async () => {
  await create({
    name: 'ckv',
    mode: 'changelog_kv',
    primaryKey: 'i',
    columns: [
      { name: 'i', type: 'int32' },
      { name: 's', type: 'string' },
    ],
  });
  await ingestCompact(
    h,
    'ckv',
    ['i', 's'],
    [
      [1, 'a'],
      [2, 'b'],
    ],
  );
  await ingestCompact(
    h,
    'ckv',
    ['i', 's', '_tp_delta'],
    [
      [1, 'a', -1],
      [2, 'b', -1],
      [3, 'b', 1],
      [4, 'c', 1],
    ],
  );
  assert.deepEqual(await latest('ckv', 'i, s, _tp_delta', 'i'), [
    [3, 'b', 1],
    [4, 'c', 1],
  ]);
});

test('changelog: _tp_delta defaults to 1 and is stored as given', async () => {
  await create({ name: 'cl', mode: 'changelog', columns: [{ name: 'i', type: 'int32' }] });
  await ingestCompact(h, 'cl', ['i'], [[1]]);
  await ingestCompact(h, 'cl', ['i', '_tp_delta'], [[1, -1]]);
  assert.deepEqual(await rows(h, 'SELECT i, _tp_delta FROM default.cl ORDER BY _tp_sn'), [
    [1, 1],
    [1, -1],
  ]);
});

test('SELECT * hides _tp_sn; ranges of sequence numbers read from the front table', async () => {
  const def = await create({ name: 'ranged', columns: [{ name: 'v', type: 'int32' }] });
  await ingestCompact(
    h,
    'ranged',
    ['v'],
    Array.from({ length: 10 }, (_, i) => [i]),
  );
  const star = (
    await h.trb.services.engine.query('SELECT * FROM default.ranged LIMIT 1', { format: 'JSONEachRow' })
  ).text();
  assert.deepEqual(Object.keys(JSON.parse(star)), ['v', '_tp_time']);
  assert.deepEqual(await rows(h, rangeSelect(def, 3, 6, 'v')), [[4], [5], [6]]);
});

test("storage_type='streaming': no historical store; the WAL is replayed into memory at start", async () => {
  await create({ name: 'queue', storageType: 'streaming', columns: [{ name: 'raw', type: 'string' }] });
  const tables = await rows(
    h,
    "SELECT name, engine FROM system.tables WHERE database = 'default' AND name LIKE '%queue%'",
  );
  assert.deepEqual(tables, [['queue', 'Memory']]);
  const r = await ingestRaw(h, 'queue', 'l1\nl2\nl3', 'text/plain;format=lines');
  assert.equal(r.statusCode, 200, r.body);
  const stats = await h.trb.services.streams.statistics('default', 'queue');
  assert.equal(stats.rowCount, 3);
  assert.ok(stats.streamingBytes > 0);
  assert.equal(stats.appliedSn, 2);
  h = await h.restart();
  assert.deepEqual(await rows(h, 'SELECT raw, toString(_tp_sn) FROM default.queue ORDER BY _tp_sn'), [
    ['l1', '0'],
    ['l2', '1'],
    ['l3', '2'],
  ]);
  await ingestRaw(h, 'queue', 'l4', 'text/plain;format=lines');
  assert.equal(h.trb.services.streams.committedSn('default', 'queue'), 3);
});

test("storage_type='memory': rows live in memory only and no WAL is written", async () => {
  await create({ name: 'volatile', storageType: 'memory', columns: [{ name: 'v', type: 'int32' }] });
  await ingestCompact(h, 'volatile', ['v'], [[1], [2]]);
  assert.deepEqual(await rows(h, 'SELECT v, toString(_tp_sn) FROM default.volatile ORDER BY _tp_sn'), [
    [1, '0'],
    [2, '1'],
  ]);
  assert.equal((await h.trb.services.streams.statistics('default', 'volatile')).streamingBytes, 0);
});

test('retention drops WAL segments once the historical store holds their rows', async () => {
  await create({
    name: 'retained',
    columns: [{ name: 'v', type: 'int32' }],
    logstoreRetentionMs: 1,
  });
  for (let i = 0; i < 3; i++) await ingestCompact(h, 'retained', ['v'], [[i]]);
  const streams = h.trb.services.streams;
  const dir = join(h.dataDir, 'streams', 'default', 'retained');
  const segments = async () => (await readdir(dir)).filter((f) => f.endsWith('.wal'));
  // Not yet flushed into the MergeTree: nothing may go.
  await streams.maintain(Date.now() + 60_000);
  assert.ok((await segments()).length >= 1);
  const walBefore = (await streams.statistics('default', 'retained')).streamingBytes;
  await h.trb.services.streams.flush('default', 'retained');
  await streams.maintain(Date.now() + 60_000);
  const after = await streams.statistics('default', 'retained');
  assert.ok(after.streamingBytes < walBefore, `${after.streamingBytes} < ${walBefore}`);
  assert.equal(after.rowCount, 3);
  assert.equal((await segments()).length, 1, 'the active (empty) segment stays');
  // Sequence numbers continue after the WAL emptied, also across a restart.
  h = await h.restart();
  await ingestCompact(h, 'retained', ['v'], [[3]]);
  assert.deepEqual(
    (await rows(h, 'SELECT toString(_tp_sn) FROM default.retained ORDER BY _tp_sn')).map((r) => r[0]),
    ['0', '1', '2', '3'],
  );
});
