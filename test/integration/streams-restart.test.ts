import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { count, createStream, ingestCompact, ingestRaw, rows } from '../helpers/streams.ts';

let h: Harness;

before(async () => {
  h = await startHarness();
});

after(() => h.close());

async function sns(stream: string): Promise<number[]> {
  return (await rows(h, `SELECT toString(_tp_sn) FROM default.${stream} ORDER BY _tp_sn`)).map((r) =>
    Number(r[0]),
  );
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

test('definitions, rows and sequence numbers continue after a restart', async () => {
  await createStream(h, {
    name: 'kept',
    description: 'survives',
    columns: [
      { name: 'v', type: 'int32' },
      { name: 's', type: 'string', default: "'dflt'" },
    ],
  });
  await ingestCompact(h, 'kept', ['v'], [[1], [2]]);
  const before = (await h.call('GET', '/v1beta2/streams/kept')).json() as Record<string, unknown>;
  h = await h.restart();
  const again = (await h.call('GET', '/v1beta2/streams/kept')).json() as Record<string, unknown>;
  assert.deepEqual(
    { ...again, row_count: 0, historical_data_bytes: 0, streaming_data_bytes: 0 },
    { ...before, row_count: 0, historical_data_bytes: 0, streaming_data_bytes: 0 },
  );
  assert.equal(again.row_count, 2);
  await ingestCompact(h, 'kept', ['v'], [[3]]);
  assert.deepEqual(await rows(h, 'SELECT v, s, toString(_tp_sn) FROM default.kept ORDER BY _tp_sn'), [
    [1, 'dflt', '0'],
    [2, 'dflt', '1'],
    [3, 'dflt', '2'],
  ]);
  assert.equal(h.trb.services.streams.committedSn('default', 'kept'), 2);
});

test('idempotency ids survive a restart (they are kept in the WAL)', async () => {
  await createStream(h, { name: 'idem', columns: [{ name: 'v', type: 'int32' }] });
  const send = () =>
    ingestRaw(h, 'idem', '{"columns":["v"],"data":[[1],[2]]}', 'application/json', {
      headers: { 'x-timeplus-idempotent-id': 'once' },
    });
  assert.equal((await send()).statusCode, 200);
  h = await h.restart();
  assert.equal((await send()).statusCode, 200);
  assert.equal(await count(h, 'idem'), 2);
});

test('WAL records the engine never got are replayed exactly once at start', async () => {
  await createStream(h, { name: 'crashy', columns: [{ name: 'v', type: 'int32' }] });
  await ingestCompact(h, 'crashy', ['v'], [[1], [2]]);
  const streams = h.trb.services.streams;
  // Acknowledged and durable in the WAL, but "lost" before reaching the Buffer (as in a crash).
  streams.setTestHooks({ skipEngineInsert: (_db, name) => name === 'crashy' });
  await ingestCompact(h, 'crashy', ['v'], [[3], [4]]);
  await ingestCompact(h, 'crashy', ['v'], [[5]]);
  streams.setTestHooks({});
  assert.equal(await count(h, 'crashy'), 2);
  h = await h.restart();
  assert.deepEqual(await rows(h, 'SELECT v FROM default.crashy ORDER BY _tp_sn'), [[1], [2], [3], [4], [5]]);
  assert.deepEqual(await sns('crashy'), upTo(5));
  h = await h.restart();
  assert.equal(await count(h, 'crashy'), 5);
  await ingestCompact(h, 'crashy', ['v'], [[6]]);
  assert.deepEqual(await sns('crashy'), upTo(6));
});

test("a sharded stream's replayed WAL records keep their shards; the turn starts at shard 0 after a restart", async () => {
  await createStream(h, { name: 'sharded', columns: [{ name: 'v', type: 'int32' }], shards: 3 });
  await ingestCompact(h, 'sharded', ['v'], [[1]]);
  const streams = h.trb.services.streams;
  streams.setTestHooks({ skipEngineInsert: (_db, name) => name === 'sharded' });
  await ingestCompact(h, 'sharded', ['v'], [[2], [3]]);
  await ingestCompact(h, 'sharded', ['v'], [[4]]);
  streams.setTestHooks({});
  h = await h.restart();
  await ingestCompact(h, 'sharded', ['v'], [[5]]);
  assert.deepEqual(await rows(h, 'SELECT v, _tp_shard FROM default.sharded ORDER BY _tp_sn'), [
    [1, 0],
    [2, 1],
    [3, 1],
    [4, 2],
    [5, 0],
  ]);
});

test('a WAL record only partly in the historical store replays only its missing rows', async () => {
  await createStream(h, { name: 'partial', columns: [{ name: 'v', type: 'int32' }] });
  const streams = h.trb.services.streams;
  streams.setTestHooks({ skipEngineInsert: (_db, name) => name === 'partial' });
  await ingestCompact(h, 'partial', ['v'], [[10], [11], [12], [13]]);
  streams.setTestHooks({});
  // Rows 0 and 1 of the record reached the MergeTree, 2 and 3 did not.
  await h.trb.services.engine.query(
    "INSERT INTO default.`.tp_history.partial` (v, _tp_time, _tp_sn) VALUES (10, '2024-01-01', 0), (11, '2024-01-01', 1)",
  );
  h = await h.restart();
  assert.deepEqual(await rows(h, 'SELECT v, toString(_tp_sn) FROM default.partial ORDER BY _tp_sn'), [
    [10, '0'],
    [11, '1'],
    [12, '2'],
    [13, '3'],
  ]);
});

test('a process killed right after acknowledging loses nothing and duplicates nothing', async () => {
  await createStream(h, { name: 'killed', columns: [{ name: 'v', type: 'int32' }] });
  await ingestCompact(h, 'killed', ['v'], [[1]]);
  const dataDir = h.dataDir;
  await h.stop();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('../helpers/stream-crash-child.ts', import.meta.url)),
      dataDir,
      'killed',
      '8',
      '25',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const acked = await new Promise<Array<{ fromSn: number; count: number }>>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  assert.equal(
    acked.reduce((n, a) => n + a.count, 0),
    200,
  );
  h = await startHarness({ dataDir });
  assert.equal(await count(h, 'killed'), 201);
  assert.deepEqual(await sns('killed'), upTo(201));
  const values = (await rows(h, 'SELECT v FROM default.killed WHERE v >= 1000 ORDER BY v')).map((r) => r[0]);
  assert.deepEqual(
    values,
    Array.from({ length: 200 }, (_, i) => 1000 + i),
  );
  await ingestCompact(h, 'killed', ['v'], [[2]]);
  assert.deepEqual(await sns('killed'), upTo(202));
});
