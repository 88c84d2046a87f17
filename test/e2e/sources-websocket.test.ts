/**
 * A websocket source against a `ws` server started here: the open message is sent on connect, each
 * JSON message becomes a row, a dropped connection is reported and reconnected (the open message
 * sent again), preview answers messages without writing, bad properties are named.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocketServer } from 'ws';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let wss: WebSocketServer;
let url: string;
const opens: string[] = [];

before(async () => {
  h = await startHarness();
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  // On the open message, the server sends 50 events, numbered from where it left off.
  let next = 0;
  wss.on('connection', (socket) => {
    socket.on('message', (m) => {
      opens.push(String(m));
      for (let i = 0; i < 50; i++, next++) socket.send(JSON.stringify({ k: next, name: `e${next}` }));
    });
  });
});

after(async () => {
  await h.close();
  for (const c of wss.clients) c.terminate();
  await new Promise((r) => wss.close(r));
});

async function scalar(sql: string): Promise<number> {
  const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
  assert.equal(r.statusCode, 200, r.body);
  return Number((r.json() as { data: unknown[][] }).data[0]?.[0]);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('a websocket source sends its open message, writes each message, and reconnects after a drop', async () => {
  const q = await h.call('POST', '/v1beta2/queries', {
    body: { sql: 'CREATE STREAM ws_events (k int64, name string)' },
  });
  assert.equal(q.statusCode, 204);
  const created = await h.call('POST', '/v1beta2/sources', {
    body: {
      name: 'ws_src',
      type: 'websocket',
      stream: 'ws_events',
      properties: { url, open_message: { subscribe: 'all' }, open_message_type: 'json', data_type: 'json' },
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = (created.json() as { id: string }).id;
  await until('50 rows', async () => (await scalar('SELECT count() FROM table(ws_events)')) === 50);
  assert.deepEqual(opens, ['{"subscribe":"all"}']);

  for (const c of wss.clients) c.terminate(); // the peer drops the connection
  await until(
    '100 rows after the reconnect',
    async () => (await scalar('SELECT count() FROM table(ws_events)')) === 100,
  );
  assert.equal(opens.length, 2, 'the open message is sent again on reconnect');
  assert.equal(await scalar('SELECT count(DISTINCT k) FROM table(ws_events)'), 100);
  const stats = await h.call(
    'GET',
    `/v1beta2/sources/${id}/stats?error_log_time_range=1h&metrics_time_range=1h`,
  );
  const body = stats.json() as { success_count: number; errors: Array<{ message: string }> };
  assert.equal(body.success_count, 100);
  assert.ok(
    body.errors.some((e) => /closed/.test(e.message)),
    stats.body,
  );
  assert.equal((await h.call('POST', `/v1beta2/sources/${id}/stop`)).statusCode, 204);
});

test('websocket preview answers messages without writing; bad properties are named', async () => {
  const r = await h.call('POST', '/v1beta2/source/preview', {
    body: {
      type: 'websocket',
      properties: { url, open_message: 'go', data_type: 'json' },
      size: 5,
      timeout: '5s',
    },
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal((r.json() as unknown[]).length, 5);
  for (const [properties, name] of [
    [{ url: 'http://example.com' }, 'properties.url'],
    [{ url, data_type: 'xml' }, 'properties.data_type'],
    [{ url, open_message: 5 }, 'properties.open_message'],
    [{ url, heartbeat: 1 }, 'properties.heartbeat'],
  ] as const) {
    const bad = await h.call('POST', '/v1beta2/sources', {
      body: { name: 'ws_bad', type: 'websocket', stream: 'ws_events', properties },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.ok((bad.json() as { message: string }).message.includes(name), bad.body);
  }
});
