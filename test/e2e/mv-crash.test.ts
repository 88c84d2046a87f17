// Issue 11, "How we will know": views aggregating a stream (a tumble window and a global
// aggregation), and two identical tail views (sharing each range's read and stepping together),
// while a writer ingests continuously; the server is killed with SIGKILL at random
// points (at least 5 times) and restarted; at the end each target holds exactly what a one-shot
// historical query over the source computes: no row lost, none doubled.
//
// Without the views' checkpoints (a restarted view starting again from the latest rows) it fails:
// windows lose rows across the kills. TRIBUTARY_MV_CRASH_KILLS raises the number of kills.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, type Run, serve, waitForInfo } from '../helpers/serve-process.ts';

const PASSWORD = 'crash-test-password';
const auth = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` };
const KILLS = Number(process.env.TRIBUTARY_MV_CRASH_KILLS ?? 5);

/** A small deterministic generator (the kill points and row values vary by seed, not by run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('views survive SIGKILL: the targets equal the historical queries over the source', async () => {
  const data = await mkdtemp(join(tmpdir(), 'tributary-mv-crash-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/default/api`;
  const env = { TRIBUTARY_DATA: data, TRIBUTARY_LOG_LEVEL: 'warn', TRIBUTARY_ADMIN_PASSWORD: PASSWORD };
  const call = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const ddl = async (sql: string) => {
    const r = await call('/v1beta2/exec', { sql, type: 'ddl' });
    assert.ok(r.status < 300, `${sql}: ${r.status} ${await r.text()}`);
  };
  const rows = async (sql: string) => {
    const r = await call('/v1beta2/exec', { sql, type: 'historical' });
    assert.equal(r.status, 200, sql);
    return ((await r.json()) as { data: unknown[][] }).data;
  };
  let run: Run = serve(['--port', String(port)], env);
  try {
    await waitForInfo(`${base}/info`, run);
    await ddl("CREATE STREAM src (k string, v int64, ts datetime64(3, 'UTC'))");
    await ddl(
      'CREATE MATERIALIZED VIEW per_window AS SELECT window_start AS ws, k, count() AS c, sum(v) AS s FROM tumble(src, ts, 1s) GROUP BY window_start, k SETTINGS checkpoint_interval = 1',
    );
    await ddl(
      'CREATE MATERIALIZED VIEW totals AS SELECT k, count() AS c, sum(v) AS s FROM src GROUP BY k EMIT PERIODIC 200ms SETTINGS checkpoint_interval = 1',
    );
    // Two identical tail views: they share each range's read and step together (shared-step-reads.ts).
    for (const name of ['tail_a', 'tail_b'])
      await ddl(
        `CREATE MATERIALIZED VIEW ${name} AS SELECT k, v, ts FROM src SETTINGS checkpoint_interval = 1`,
      );
    const rnd = random(11);
    let event = 0;
    // The writer: batches of rows with event times one window (1 s) per 50 rows, acknowledged
    // batches only count (a batch cut by the kill is sent again after the restart, with the same
    // idempotency id, as a client retrying must: a batch committed just before the kill but not
    // acknowledged would otherwise be written twice, and its copy of an already closed window's
    // rows would be late for the view while the historical query counts it).
    const writeFor = async (ms: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const id = `batch-${event}`;
        const batch: unknown[][] = [];
        for (let i = 0; i < 20; i++, event++)
          batch.push([
            `k${event % 4}`,
            event,
            new Date(Date.UTC(2024, 0, 1) + Math.floor(event / 50) * 1000).toISOString(),
          ]);
        const r = await call(
          '/v1beta2/streams/src/ingest',
          { columns: ['k', 'v', 'ts'], data: batch },
          { 'x-timeplus-idempotent-id': id },
        ).catch(() => undefined);
        if (r?.status !== 200) {
          event -= 20;
          return;
        }
      }
    };
    for (let kill = 0; kill < KILLS; kill++) {
      const writing = writeFor(60_000);
      await new Promise((r) => setTimeout(r, 300 + rnd() * 1500));
      run.kill('SIGKILL');
      await run.exit;
      await writing;
      run = serve(['--port', String(port)], env);
      await waitForInfo(`${base}/info`, run);
    }
    await writeFor(1000);
    // A row far in the future closes every window written.
    await call('/v1beta2/streams/src/ingest', {
      columns: ['k', 'v', 'ts'],
      data: [['k0', -1, '2030-01-01T00:00:00Z']],
    });
    const expectedWindows = await rows(
      "SELECT window_start, k, count(), sum(v) FROM tumble(table(src), ts, 1s) WHERE ts < '2030-01-01' GROUP BY window_start, k ORDER BY window_start, k",
    );
    const expectedTotals = await rows('SELECT k, count(), sum(v) FROM table(src) GROUP BY k ORDER BY k');
    const expectedTail = await rows('SELECT k, v, ts FROM table(src) ORDER BY k, v, ts');
    let tails: unknown[][][] = [];
    const deadline = Date.now() + 60_000;
    let windows: unknown[][] = [];
    let totals: unknown[][] = [];
    while (Date.now() < deadline) {
      windows = await rows('SELECT ws, k, c, s FROM table(per_window) ORDER BY ws, k');
      totals = await rows(
        'SELECT k, argMax(c, _tp_sn), argMax(s, _tp_sn) FROM (SELECT *, _tp_sn FROM table(totals)) GROUP BY k ORDER BY k',
      );
      tails = [];
      for (const name of ['tail_a', 'tail_b'])
        tails.push(await rows(`SELECT k, v, ts FROM table(${name}) ORDER BY k, v, ts`));
      if (
        JSON.stringify(windows) === JSON.stringify(expectedWindows) &&
        JSON.stringify(totals) === JSON.stringify(expectedTotals) &&
        tails.every((t) => JSON.stringify(t) === JSON.stringify(expectedTail))
      )
        break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(windows, expectedWindows, 'every window once');
    assert.deepEqual(totals, expectedTotals, 'the global aggregation over every row');
    for (const t of tails) assert.deepEqual(t, expectedTail, 'each tail view holds every row once');
  } finally {
    run.kill('SIGKILL');
    await run.exit;
    await rm(data, { recursive: true, force: true });
  }
});
