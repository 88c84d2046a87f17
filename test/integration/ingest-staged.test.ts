// Large compact requests: their rows are staged in the engine while JavaScript checks them
// (src/stream/stage-area.ts). The rows a staged request lands must be exactly those of the usual
// insert (values, _tp_sn, _tp_time, DEFAULTs), and a refused one must land nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { STAGE_DB } from '../../src/stream/stage-area.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { assertError, count, createStream, ingestRaw, rows } from '../helpers/streams.ts';

let h: Harness;
/** Enough rows for a body past the 128 KiB staging threshold. */
const N = 4000;

const COLS = [
  { name: 'k', type: 'int64' },
  { name: 's', type: 'string' },
  { name: 'f', type: 'float64' },
  { name: 'd', type: 'int32', default: 'k * 2' },
];

before(async () => {
  h = await startHarness();
  for (const name of ['staged', 'plain', 'refused', 'engine_refused', 'crashy', 'altered', 'many'])
    await createStream(h, { name, columns: COLS });
  // NDJSON rows may leave any column out: staged only for streams without DEFAULTs.
  const NO_DEFAULTS = COLS.filter((c) => !c.default);
  for (const name of ['nd_staged', 'nd_plain', 'nd_time'])
    await createStream(h, { name, columns: NO_DEFAULTS });
});

after(() => h.close());

function body(from: number, n: number, columns = ['k', 's', 'f']): string {
  const data = Array.from({ length: n }, (_, i) => {
    const k = from + i;
    const row = [k, `value-${k}-${'x'.repeat(20)}`, k * 0.5, k];
    return row.slice(0, columns.length);
  });
  return JSON.stringify({ columns, data });
}

const stats = () => h.trb.services.streams.stageCounters();

async function stagedRows(): Promise<number> {
  const tables = await rows(h, `SELECT name FROM system.tables WHERE database = '${STAGE_DB}'`);
  let n = 0;
  for (const [t] of tables) n += Number((await rows(h, `SELECT count() FROM ${STAGE_DB}.${t}`))[0]?.[0]);
  return n;
}

test('a large compact request is staged and lands exactly the rows of the usual insert', async () => {
  const before = stats();
  const text = body(0, N);
  assert.ok(Buffer.byteLength(text) >= 128 * 1024);
  const r = await ingestRaw(h, 'staged', text, 'application/json');
  assert.equal(r.statusCode, 200, r.body);
  const after = stats();
  assert.equal(after.started, before.started + 1);
  assert.equal(after.moved, before.moved + 1);
  // The same rows through the usual path: a body that is not canonical (a third key) is never staged.
  const doc = JSON.parse(text) as { columns: string[]; data: unknown[][] };
  const plain = await ingestRaw(
    h,
    'plain',
    JSON.stringify({ data: doc.data, columns: doc.columns }),
    'application/json',
  );
  assert.equal(plain.statusCode, 200, plain.body);
  assert.equal(stats().started, after.started);
  const cols = 'k, s, f, d, _tp_sn';
  const a = await rows(h, `SELECT ${cols} FROM default.staged ORDER BY _tp_sn`);
  const b = await rows(h, `SELECT ${cols} FROM default.plain ORDER BY _tp_sn`);
  assert.equal(a.length, N);
  assert.deepEqual(a, b);
  assert.deepEqual(a[N - 1], [N - 1, `value-${N - 1}-${'x'.repeat(20)}`, (N - 1) * 0.5, (N - 1) * 2, N - 1]);
  // One commit time for the request, as an insert gives (the implicit _tp_time DEFAULT).
  const times = await rows(
    h,
    'SELECT count(DISTINCT _tp_time), min(_tp_time) > now64() - 60 FROM default.staged',
  );
  assert.deepEqual(times, [[1, 1]]);
  // The staging table is emptied once the request is answered.
  for (let i = 0; i < 50 && (await stagedRows()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await stagedRows(), 0);
});

test('a refused large request lands no row and names the row and column', async () => {
  const before = stats();
  const doc = JSON.parse(body(0, N)) as { columns: string[]; data: unknown[][] };
  (doc.data[N - 2] as unknown[])[0] = 'not a number';
  const r = await ingestRaw(h, 'refused', JSON.stringify(doc), 'application/json');
  assertError(r, 400, 10303 /* INGEST_BAD_VALUE */, new RegExp(`^Row ${N - 1}, column k:`));
  assert.equal(stats().started, before.started + 1);
  assert.equal(stats().discarded, before.discarded + 1);
  assert.equal(await count(h, 'refused'), 0);
  assert.equal(h.trb.services.streams.committedSn('default', 'refused'), -1);
  for (let i = 0; i < 50 && (await stagedRows()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await stagedRows(), 0);
  // The next request numbers from 0 as if nothing had been tried.
  assert.equal((await ingestRaw(h, 'refused', body(0, N), 'application/json')).statusCode, 200);
  assert.deepEqual(await rows(h, 'SELECT min(_tp_sn), max(_tp_sn) FROM default.refused'), [[0, N - 1]]);
});

test('rows the engine refuses to stage still land through the usual insert (1.0 for an integer)', async () => {
  const before = stats();
  const text = body(0, N).replace('[7,', '[7.0,');
  assert.ok(text.includes('[7.0,'));
  const r = await ingestRaw(h, 'engine_refused', text, 'application/json');
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(stats().started, before.started + 1);
  assert.equal(stats().moved, before.moved);
  assert.equal(await count(h, 'engine_refused'), N);
  assert.deepEqual(await rows(h, 'SELECT k, _tp_sn FROM default.engine_refused WHERE k = 7'), [[7, 7]]);
});

test('a staged request acknowledged but never inserted (a crash) is replayed from the WAL at start', async () => {
  const streams = h.trb.services.streams;
  streams.setTestHooks({ skipEngineInsert: (_db, name) => name === 'crashy' });
  const r = await ingestRaw(h, 'crashy', body(0, N), 'application/json');
  streams.setTestHooks({});
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(await count(h, 'crashy'), 0);
  h = await h.restart();
  assert.equal(await count(h, 'crashy'), N);
  assert.deepEqual(await rows(h, 'SELECT sum(k), sum(d), min(_tp_sn), max(_tp_sn) FROM default.crashy'), [
    [(N * (N - 1)) / 2, N * (N - 1), 0, N - 1],
  ]);
  // After the restart the staging area starts empty and works again.
  assert.equal(await stagedRows(), 0);
  const started = h.trb.services.streams.stageCounters().started;
  assert.equal((await ingestRaw(h, 'crashy', body(N, N), 'application/json')).statusCode, 200);
  assert.equal(h.trb.services.streams.stageCounters().moved, started + 1);
  assert.equal(await count(h, 'crashy'), 2 * N);
});

test('after ALTER STREAM a staged request uses the new structure', async () => {
  assert.equal((await ingestRaw(h, 'altered', body(0, N), 'application/json')).statusCode, 200);
  const r = await h.call('POST', '/v1beta2/queries', {
    body: { sql: "ALTER STREAM altered ADD COLUMN extra string DEFAULT 'e'" },
  });
  assert.equal(r.statusCode, 204, r.body);
  const moved = stats().moved;
  assert.equal((await ingestRaw(h, 'altered', body(N, N), 'application/json')).statusCode, 200);
  assert.equal(stats().moved, moved + 1);
  assert.deepEqual(await rows(h, "SELECT count(), countIf(extra = 'e'), max(_tp_sn) FROM default.altered"), [
    [2 * N, 2 * N, 2 * N - 1],
  ]);
});

test('several large requests in flight: every row once, contiguous sequence numbers', async () => {
  const before = stats();
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => ingestRaw(h, 'many', body(i * N, N), 'application/json')),
  );
  for (const r of results) assert.equal(r.statusCode, 200, r.body);
  // Staged only while the stream's writer is idle and no other staged request is in flight: the
  // first, not the ones arriving while it is written (those are merged into group commits).
  assert.ok(stats().started - before.started < 6, JSON.stringify(stats()));
  assert.deepEqual(
    await rows(
      h,
      'SELECT count(), uniqExact(k), min(_tp_sn), max(_tp_sn), uniqExact(_tp_sn) FROM default.many',
    ),
    [[6 * N, 6 * N, 0, 6 * N - 1, 6 * N]],
  );
  // Each request's rows are contiguous in sequence numbers (one request, one range).
  const ranges = await rows(
    h,
    `SELECT intDiv(k, ${N}) AS req, max(_tp_sn) - min(_tp_sn) FROM default.many GROUP BY req ORDER BY req`,
  );
  for (const [, span] of ranges) assert.equal(Number(span), N - 1);
});

test('a request naming a non-nullable column with a DEFAULT is not staged (a null there takes the DEFAULT)', async () => {
  const before = stats();
  const r = await ingestRaw(h, 'plain', body(0, N, ['k', 's', 'f', 'd']), 'application/json');
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(stats().started, before.started);
});

test('a process killed right after acknowledging staged requests loses nothing and duplicates nothing', async () => {
  await createStream(h, { name: 'killed', columns: [{ name: 'v', type: 'int32' }] });
  const dataDir = h.dataDir;
  await h.stop();
  const requests = 3;
  const perRequest = 20_000; // ~160 KB per body: staged
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('../helpers/stream-crash-child.ts', import.meta.url)),
      dataDir,
      'killed',
      String(requests),
      String(perRequest),
      'body',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [acked, staged] = await new Promise<[Array<{ fromSn: number; count: number }>, { moved: number }]>(
    (resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const lines = out.split('\n');
        if (lines.length >= 3) resolve([JSON.parse(lines[0] as string), JSON.parse(lines[1] as string)]);
      });
      child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
    },
  );
  assert.equal(staged.moved, requests);
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  assert.equal(
    acked.reduce((n, a) => n + a.count, 0),
    requests * perRequest,
  );
  h = await startHarness({ dataDir });
  const total = requests * perRequest;
  assert.deepEqual(
    await rows(
      h,
      'SELECT count(), uniqExact(v), min(v), max(v), min(_tp_sn), max(_tp_sn) FROM default.killed',
    ),
    [[total, total, 1000, 1000 + total - 1, 0, total - 1]],
  );
  // Each request's rows carry its acknowledged range, in the order the request gave them.
  for (const [r, a] of acked.entries()) {
    const got = await rows(
      h,
      `SELECT count() FROM default.killed WHERE _tp_sn BETWEEN ${a.fromSn} AND ${a.fromSn + a.count - 1} AND v - ${1000 + r * perRequest} = _tp_sn - ${a.fromSn}`,
    );
    assert.deepEqual(got, [[perRequest]]);
  }
});

function ndjson(from: number, n: number, row: (k: number) => Record<string, unknown> = () => ({})): string {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    // Every third row leaves `f` out (it takes the type's default, 0, either way).
    const o: Record<string, unknown> = { k, s: `value-${k}-${'x'.repeat(20)}` };
    if (k % 3 !== 0) o.f = k * 0.5;
    return JSON.stringify({ ...o, ...row(k) });
  }).join('\n');
}

test('a large NDJSON request is staged and lands exactly the rows of the usual insert', async () => {
  const before = stats();
  const text = ndjson(0, N);
  assert.ok(Buffer.byteLength(text) >= 128 * 1024);
  assert.equal((await ingestRaw(h, 'nd_staged', text, 'application/x-ndjson')).statusCode, 200);
  assert.equal(stats().moved, before.moved + 1);
  // The same rows, with a blank line (never staged: the engine would stop there; Tributary collapses it).
  const blank = text.replace('\n', '\n\n');
  assert.equal((await ingestRaw(h, 'nd_plain', blank, 'application/x-ndjson')).statusCode, 200);
  assert.equal(stats().started, before.started + 1);
  const cols = 'k, s, f, _tp_sn';
  const a = await rows(h, `SELECT ${cols} FROM default.nd_staged ORDER BY _tp_sn`);
  const b = await rows(h, `SELECT ${cols} FROM default.nd_plain ORDER BY _tp_sn`);
  assert.equal(a.length, N);
  assert.deepEqual(a, b);
  assert.deepEqual(a[3], [3, `value-3-${'x'.repeat(20)}`, 0, 3]);
  assert.deepEqual(await rows(h, 'SELECT count(DISTINCT _tp_time) FROM default.nd_staged'), [[1]]);
});

test('an NDJSON request giving _tp_time is not taken from the staging table (its times are kept)', async () => {
  const before = stats();
  const text = ndjson(0, N, (k) => (k === N - 1 ? { _tp_time: '2020-01-02T03:04:05.678Z' } : {}));
  assert.equal((await ingestRaw(h, 'nd_time', text, 'application/x-ndjson')).statusCode, 200);
  assert.equal(stats().started, before.started + 1);
  assert.equal(stats().moved, before.moved);
  assert.equal(await count(h, 'nd_time'), N);
  assert.deepEqual(await rows(h, `SELECT toString(_tp_time) FROM default.nd_time WHERE k = ${N - 1}`), [
    ['2020-01-02 03:04:05.678'],
  ]);
  assert.deepEqual(
    await rows(h, 'SELECT countIf(toYear(_tp_time) = 2020), count(DISTINCT _tp_time) FROM default.nd_time'),
    [[1, 2]],
  );
});

test('NDJSON requests into a stream with a DEFAULT are not staged', async () => {
  const before = stats();
  assert.equal((await ingestRaw(h, 'plain', ndjson(0, N), 'application/x-ndjson')).statusCode, 200);
  assert.equal(stats().started, before.started);
});

test('a staged request of several engine blocks (over 10 MiB) keeps its row order in _tp_sn', async () => {
  await createStream(h, {
    name: 'big',
    columns: [
      { name: 'k', type: 'int64' },
      { name: 's', type: 'string' },
    ],
  });
  const n = 400_000;
  const data = Array.from({ length: n }, (_, k) => [k, `row-${k}-padding-padding`]);
  const text = JSON.stringify({ columns: ['k', 's'], data });
  assert.ok(Buffer.byteLength(text) > 10 * 1024 * 1024);
  const moved = stats().moved;
  const r = await ingestRaw(h, 'big', text, 'application/json');
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(stats().moved, moved + 1);
  assert.deepEqual(
    await rows(h, 'SELECT count(), countIf(_tp_sn = k), min(_tp_sn), max(_tp_sn) FROM default.big'),
    [[n, n, 0, n - 1]],
  );
});
