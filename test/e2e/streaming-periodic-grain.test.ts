/**
 * EMIT PERIODIC with intervals below a millisecond (0099_fixed_issues id 6): Proton accepts `1ns`
 * and `1us`; Tributary runs them at its clock's 1 ms grain. A `1ns` period once made the executor's
 * loop spin without yielding (the epoch-millisecond clock plus 1e-6 is the same number), so the
 * whole server stopped answering. The server runs as a child process here, so that a spinning
 * event loop fails this test instead of freezing the test runner with it. Intervals longer than a
 * day are refused (43).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, serve, waitForInfo } from '../helpers/serve-process.ts';

const PASSWORD = 'periodic-grain-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

/** `p`, or a failure saying what did not happen within `ms` (a server that stopped answering). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** POST /v1beta2/queries, giving up after `ms` (a server that stopped answering). */
async function post(base: string, sql: string, ms = 5000): Promise<Response> {
  return fetch(`${base}/v1beta2/queries`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ sql, batching_policy: { time_ms: 0 } }),
    signal: AbortSignal.timeout(ms),
  });
}

test('EMIT PERIODIC 1ns / 1us: the server keeps answering and the query emits; 1w is refused (43)', async () => {
  const data = await mkdtemp(join(tmpdir(), 'tributary-periodic-'));
  const port = await freePort();
  const run = serve(['--port', String(port)], {
    TRIBUTARY_DATA: data,
    TRIBUTARY_ADMIN_PASSWORD: PASSWORD,
    TRIBUTARY_LOG_LEVEL: 'warn',
  });
  const base = `http://127.0.0.1:${port}/default/api`;
  const streams: AbortController[] = [];
  try {
    await waitForInfo(`${base}/info`, run);
    assert.equal((await post(base, 'CREATE STREAM grain (v int32)')).status, 204);
    const readers = [];
    for (const unit of ['1ns', '1us']) {
      const abort = new AbortController();
      streams.push(abort);
      const r = await fetch(`${base}/v1beta2/queries`, {
        method: 'POST',
        headers: { authorization: AUTH, 'content-type': 'application/json' },
        body: JSON.stringify({
          sql: `SELECT count() FROM grain EMIT PERIODIC ${unit}`,
          batching_policy: { time_ms: 0 },
        }),
        signal: abort.signal,
      });
      assert.match(String(r.headers.get('content-type')), /text\/event-stream/, unit);
      readers.push((r.body as ReadableStream<Uint8Array>).getReader());
    }
    // The server still answers other requests while both queries run.
    const list = await fetch(`${base}/v1beta2/queries`, {
      headers: { authorization: AUTH },
      signal: AbortSignal.timeout(5000),
    });
    assert.equal(list.status, 200);
    assert.equal((await post(base, 'INSERT INTO grain (v) VALUES (1), (2)')).status, 204);
    // Each query emits the count (2) soon after.
    for (const reader of readers) {
      let text = '';
      const deadline = Date.now() + 10_000;
      while (!/\n\ndata: \[\[2\]\]/.test(text) && !/^data: \[\[2\]\]/m.test(text) && Date.now() < deadline) {
        const { value, done } = await within(reader.read(), 5000, 'the emitted count');
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      assert.match(text, /^data: \[\[2\]\]$/m, text.slice(0, 500));
    }
    const week = await post(base, 'SELECT count() FROM grain EMIT PERIODIC 1w');
    assert.equal(week.status, 400);
    assert.equal(((await week.json()) as { code: number }).code, 43);
  } finally {
    for (const a of streams) a.abort();
    run.kill('SIGKILL');
    await run.exit;
    await rm(data, { recursive: true, force: true });
  }
});
