import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ChdbEngine } from '../../src/engine/chdb-engine.ts';
import { TributaryError } from '../../src/errors/tributary-error.ts';

let dir: string;
let engine: ChdbEngine;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-engine-'));
  engine = new ChdbEngine({ dataPath: dir, sessions: { system: 2, user: 2 } });
});
after(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

const SLOW = 'SELECT sum(cityHash64(number)) FROM numbers(100000000000) SETTINGS max_threads = 1';

test('queries return the requested format; denormals come back as strings', async () => {
  const r = await engine.query("SELECT 1 AS a, 'x' AS b, inf AS c, nan AS d, toInt64(9007199254740993) AS e");
  assert.equal(r.text().trim(), '[1, "x", "inf", "nan", 9007199254740993]');
  assert.equal((await engine.query('SELECT 2', { format: 'TSV' })).text(), '2\n');
});

test('inserts take a payload in a text format', async () => {
  await engine.query('CREATE TABLE t (a Int32, b String) ENGINE = MergeTree ORDER BY a');
  const r = await engine.insert('t', '[1,"x"]\n[2,"y"]\n', { format: 'JSONCompactEachRow' });
  assert.equal(r.rowsWritten, 2);
  assert.equal((await engine.query('SELECT count() FROM t', { format: 'TSV' })).text(), '2\n');
});

test('stream hands back the result in chunks', async () => {
  let rows = 0;
  for await (const chunk of engine.stream('SELECT number FROM numbers(200000)')) rows += chunk.rows;
  assert.equal(rows, 200000);
});

test('engine errors keep their code and name', async () => {
  await assert.rejects(engine.query('SELECT * FROM nowhere'), (e: unknown) => {
    assert.ok(e instanceof TributaryError);
    assert.equal(e.code, 60);
    assert.equal(e.status, 404);
    assert.equal(e.system, 'timeplusd');
    return true;
  });
  await assert.rejects(engine.query('SELEC 1'), (e: TributaryError) => e.code === 62);
});

test('aborting a query stops it inside the engine', async () => {
  const ac = new AbortController();
  const started = performance.now();
  const p = engine.query(SLOW, { signal: ac.signal, lane: 'user' });
  setTimeout(() => ac.abort(), 300);
  await assert.rejects(p, (e: TributaryError) => e.errorName === 'QUERY_CANCELED' && e.code === 394);
  assert.ok(performance.now() - started < 10_000);
  // chDB keeps a killed statement in its process list, marked cancelled, until the session's next
  // statement; what matters is that nothing un-cancelled is left computing.
  const left = (
    await engine.query(
      "SELECT count() FROM system.processes WHERE query LIKE '%cityHash64%' AND query NOT LIKE '%system.processes%' AND NOT is_cancelled",
      { format: 'TSV' },
    )
  ).text();
  assert.equal(left, '0\n');
});

test('timeoutMs stops a query with QUERY_TIMEOUT', async () => {
  await assert.rejects(engine.query(SLOW, { timeoutMs: 300, lane: 'user' }), (e: TributaryError) => {
    assert.equal(e.errorName, 'QUERY_TIMEOUT');
    assert.equal(e.code, 159);
    assert.match(e.message, /300 ms/);
    return true;
  });
});

test('a long user query does not hold up the system lane', async () => {
  const ac = new AbortController();
  const slow = engine.query(SLOW, { signal: ac.signal, lane: 'user' }).catch(() => undefined);
  const slow2 = engine.query(SLOW, { signal: ac.signal, lane: 'user' }).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(engine.load().running, 2);
  const r = await engine.query('SELECT 42', { format: 'TSV', lane: 'system' });
  assert.equal(r.text(), '42\n');
  ac.abort();
  await Promise.all([slow, slow2]);
});

test('statements beyond the pool size wait their turn', async () => {
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) => engine.query(`SELECT ${i}`, { format: 'TSV' })),
  );
  assert.deepEqual(
    results.map((r) => r.text()),
    Array.from({ length: 10 }, (_, i) => `${i}\n`),
  );
});

test('the system and stream lanes format small results on the calling thread; the user lane keeps the default', async () => {
  const setting = async (lane: 'system' | 'stream' | 'user') =>
    (await engine.query("SELECT getSetting('output_format_parallel_formatting')", { lane, format: 'TSV' }))
      .text()
      .trim();
  assert.equal(await setting('system'), 'false');
  assert.equal(await setting('stream'), 'false');
  assert.equal(await setting('user'), 'true');
});

test('activity shows each lane and the statement a busy session runs', async () => {
  const ac = new AbortController();
  const slow = engine.query(SLOW, { signal: ac.signal, lane: 'user' }).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  const a = engine.activity();
  assert.deepEqual(a.lanes.user, { sessions: 2, busy: 1, waiting: 0 });
  assert.equal(a.lanes.system?.busy, 0);
  assert.equal(a.running.length, 1);
  assert.equal(a.running[0]?.lane, 'user');
  assert.match(a.running[0]?.statement ?? '', /^SELECT sum\(cityHash64/);
  ac.abort();
  await slow;
  assert.deepEqual(engine.activity().running, []);
});
