// Issue 17, "How we will know": an http sink delivers a stream to a real HTTP receiver while a
// writer ingests continuously; the server is killed with SIGKILL twice at random points and
// restarted. The receiver keeps one copy per idempotency key (as a receiver that drops
// redeliveries does): in the end it holds every row of the stream exactly once, and a key sent
// twice always carried the same rows. TRIBUTARY_SINK_CRASH_KILLS raises the number of kills.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HttpReceiver } from '../helpers/http-receiver.ts';
import { freePort, type Run, serve, waitForInfo } from '../helpers/serve-process.ts';

const PASSWORD = 'sink-crash-password';
const auth = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` };
const KILLS = Number(process.env.TRIBUTARY_SINK_CRASH_KILLS ?? 2);

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('an http sink survives SIGKILL: every row reaches the receiver once per key, none lost', async () => {
  const data = await mkdtemp(join(tmpdir(), 'tributary-sink-crash-'));
  const rx = await HttpReceiver.start();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/default/api`;
  const env = { TRIBUTARY_DATA: data, TRIBUTARY_LOG_LEVEL: 'warn', TRIBUTARY_ADMIN_PASSWORD: PASSWORD };
  const call = async (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  let run: Run = serve(['--port', String(port)], env);
  try {
    await waitForInfo(`${base}/info`, run);
    const made = await call('/v1beta2/exec', { sql: 'CREATE STREAM src (id int64)', type: 'ddl' });
    assert.ok(made.status < 300, await made.text());
    const sink = await call('/v1beta2/sinks', {
      name: 'crash_sink',
      type: 'http',
      query: 'SELECT id FROM src',
      properties: { url: `${rx.url}/in`, batch_size: 7, retry_backoff_ms: 20, retry_backoff_max_ms: 200 },
    });
    assert.equal(sink.status, 201, await sink.text());
    const rnd = random(17);
    let next = 0;
    const writeFor = async (ms: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const batch = Array.from({ length: 10 }, (_, i) => [next + i]);
        const r = await call('/v1beta2/streams/src/ingest', { columns: ['id'], data: batch }).catch(
          () => undefined,
        );
        if (r?.status !== 200) return;
        next += 10;
      }
    };
    for (let kill = 0; kill < KILLS; kill++) {
      const writing = writeFor(60_000);
      await new Promise((r) => setTimeout(r, 400 + rnd() * 1500));
      run.kill('SIGKILL');
      await run.exit;
      await writing;
      run = serve(['--port', String(port)], env);
      await waitForInfo(`${base}/info`, run);
    }
    await writeFor(800);

    const stored = await call('/v1beta2/exec', {
      sql: 'SELECT id FROM table(src) ORDER BY id',
      type: 'historical',
    });
    assert.equal(stored.status, 200);
    const expected = ((await stored.json()) as { data: number[][] }).data.map((r) => Number(r[0]));
    assert.ok(expected.length > 0);

    /** The receiver's view: one body per key (the first accepted), and every body a key had. */
    const byKey = () => {
      const first = new Map<string, string>();
      const bodies = new Map<string, Set<string>>();
      for (const r of rx.accepted()) {
        const key = String(r.headers['idempotency-key']);
        if (!first.has(key)) first.set(key, r.body);
        bodies.set(key, (bodies.get(key) ?? new Set()).add(r.body));
      }
      const ids = [...first.values()]
        .flatMap((b) => b.split('\n').filter(Boolean))
        .map((l) => Number((JSON.parse(l) as { id: number }).id))
        .sort((a, b) => a - b);
      return { ids, bodies };
    };
    await rx.until(() => byKey().ids.length >= expected.length, `${expected.length} rows delivered`, 1200);
    const { ids, bodies } = byKey();
    assert.deepEqual(ids, expected, 'every row of the stream once (by key)');
    for (const [key, b] of bodies) assert.equal(b.size, 1, `key ${key} was sent with different rows`);
    const resent = rx.accepted().length - bodies.size;
    console.log(`# rows ${expected.length}, requests ${rx.accepted().length}, redelivered keys ${resent}`);
  } finally {
    run.kill('SIGKILL');
    await run.exit;
    await rx.close();
    await rm(data, { recursive: true, force: true });
  }
});
