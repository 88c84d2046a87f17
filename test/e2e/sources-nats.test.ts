/**
 * nats and nats_jetstream sources against a real nats-server (JetStream enabled) started here:
 * core NATS messages land in the stream; a JetStream source survives a SIGKILL of the Tributary
 * process with every message exactly once; an unreachable server is recorded in the stats and
 * retried until it comes up; bad credentials are recorded too; preview reads without writing.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { type NatsServer, startNatsServer } from '../helpers/nats-server.ts';
import { freePort, type Run, serve, waitForInfo } from '../helpers/serve-process.ts';

const PASSWORD = 'nats-e2e-admin-password';
const auth = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` };

let nats: NatsServer;
let data: string;
let port: number;
let run: Run;
let base: string;

async function startTributary(): Promise<void> {
  run = serve(['--host', '127.0.0.1', '--port', String(port)], {
    TRIBUTARY_DATA: data,
    TRIBUTARY_ADMIN_PASSWORD: PASSWORD,
    TRIBUTARY_LOG_LEVEL: 'error',
  });
  await waitForInfo(`${base}/info`, run);
}

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: () => unknown }> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, json: () => JSON.parse(text) };
}

async function sql(q: string): Promise<void> {
  const r = await call('POST', '/v1beta2/queries', { sql: q });
  assert.equal(r.status, 204);
}

async function scalar(q: string): Promise<number> {
  const r = await call('POST', '/v1beta2/exec', { sql: q, type: 'historical' });
  assert.equal(r.status, 200);
  return Number((r.json() as { data: unknown[][] }).data[0]?.[0]);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`timed out waiting for ${what}`);
}

before(async () => {
  nats = await startNatsServer();
  data = await mkdtemp(join(tmpdir(), 'tributary-nats-'));
  port = await freePort();
  base = `http://127.0.0.1:${port}/default/api`;
  await startTributary();
});

after(async () => {
  run.kill('SIGTERM');
  await run.exit;
  await nats.stop();
  await rm(data, { recursive: true, force: true });
});

test('a nats source writes each JSON message as a row; text messages go to raw', async () => {
  await sql('CREATE STREAM nats_events (k int64, name string)');
  const created = await call('POST', '/v1beta2/sources', {
    name: 'nats_src',
    type: 'nats',
    stream: 'nats_events',
    properties: { url: nats.url, subject: 'ev.>', data_type: 'json' },
  });
  assert.equal(created.status, 201);
  const nc = await connect({ servers: nats.url });
  // Core NATS delivers only to live subscriptions: probe until the source listens.
  await until('the source to subscribe', async () => {
    nc.publish('ev.probe', JSON.stringify({ k: -1, name: 'probe' }));
    await nc.flush();
    return (await scalar('SELECT count() FROM table(nats_events)')) > 0;
  });
  for (let k = 0; k < 100; k++) nc.publish(`ev.${k % 3}`, JSON.stringify({ k, name: `n${k}` }));
  await nc.flush();
  await until(
    '100 messages',
    async () => (await scalar('SELECT count() FROM table(nats_events) WHERE k >= 0')) === 100,
  );
  assert.equal(await scalar('SELECT sum(k) FROM table(nats_events) WHERE k >= 0'), 4950);

  // data_type text: the payload is column raw.
  await sql('CREATE STREAM nats_text (raw string)');
  assert.equal(
    (
      await call('POST', '/v1beta2/sources', {
        name: 'nats_text_src',
        type: 'nats',
        stream: 'nats_text',
        properties: { url: nats.url, subject: 'txt', data_type: 'text' },
      })
    ).status,
    201,
  );
  await until('a text message', async () => {
    nc.publish('txt', 'hello world');
    await nc.flush();
    return (await scalar("SELECT count() FROM table(nats_text) WHERE raw = 'hello world'")) > 0;
  });
  await nc.close();
});

test('a nats_jetstream source: every message exactly once across a SIGKILL of the server', async () => {
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  const js = jetstream(nc);
  const total = 3000;
  for (let k = 0; k < total / 2; k++)
    await js.publish(`orders.${k % 5}`, JSON.stringify({ k, name: `o${k}` }));

  await sql('CREATE STREAM js_orders (k int64, name string)');
  const created = await call('POST', '/v1beta2/sources', {
    name: 'js_src',
    type: 'nats_jetstream',
    stream: 'js_orders',
    properties: {
      url: nats.url,
      stream: 'ORDERS',
      subject: 'orders.>',
      durable_name: 'trb_orders',
      batch_size: 100,
    },
  });
  assert.equal(created.status, 201);
  // Kill the server while the backlog is being read (some rows committed, not all).
  await until('the first rows', async () => (await scalar('SELECT count() FROM table(js_orders)')) > 0);
  run.kill('SIGKILL');
  await run.exit;
  for (let k = total / 2; k < total; k++)
    await js.publish(`orders.${k % 5}`, JSON.stringify({ k, name: `o${k}` }));
  await startTributary();
  await until(`${total} rows`, async () => (await scalar('SELECT count() FROM table(js_orders)')) >= total);
  // Let any redelivery land before counting again: the consumer has nothing pending.
  await until('no pending messages', async () => {
    const info = await jsm.consumers.info('ORDERS', 'trb_orders');
    return info.num_pending === 0 && info.num_ack_pending === 0;
  });
  assert.equal(await scalar('SELECT count() FROM table(js_orders)'), total, 'no message twice');
  assert.equal(await scalar('SELECT count(DISTINCT k) FROM table(js_orders)'), total, 'no message lost');
  await nc.close();
});

test('an unreachable server is recorded and retried until it comes up; bad credentials are recorded', async () => {
  const laterPort = await freePort();
  await sql('CREATE STREAM late_events (k int64)');
  const created = await call('POST', '/v1beta2/sources', {
    name: 'late_src',
    type: 'nats',
    stream: 'late_events',
    properties: { url: `nats://127.0.0.1:${laterPort}`, subject: 'late' },
  });
  assert.equal(created.status, 201);
  const id = (created.json() as { id: string }).id;
  await until('a connection error in the stats', async () => {
    const s = (
      await call('GET', `/v1beta2/sources/${id}/stats?error_log_time_range=1h&metrics_time_range=10m`)
    ).json() as { errors: unknown[] };
    return s.errors.length > 0;
  });
  assert.equal(
    ((await call('GET', `/v1beta2/sources/${id}`)).json() as { status: string }).status,
    'running',
  );
  assert.equal((await call('GET', '/v1beta2/streams')).status, 200, 'the server keeps serving');

  const late = await startNatsServer({ port: laterPort });
  const nc = await connect({ servers: late.url });
  await until('a message through the late server', async () => {
    nc.publish('late', JSON.stringify({ k: 7 }));
    await nc.flush();
    return (await scalar('SELECT count() FROM table(late_events)')) > 0;
  });
  await nc.close();

  const locked = await startNatsServer({ auth: { user: 'u', pass: 'right' } });
  const bad = await call('POST', '/v1beta2/sources', {
    name: 'badcred_src',
    type: 'nats',
    stream: 'late_events',
    properties: { url: locked.url, subject: 'x', username: 'u', password: 'wrong' },
  });
  const badId = (bad.json() as { id: string }).id;
  await until('an authorization error', async () => {
    const s = (
      await call('GET', `/v1beta2/sources/${badId}/stats?error_log_time_range=1h&metrics_time_range=10m`)
    ).json() as { errors: Array<{ message: string }> };
    return s.errors.some((e) => /auth/i.test(e.message));
  });
  await call('POST', `/v1beta2/sources/${badId}/stop`);
  await call('POST', `/v1beta2/sources/${id}/stop`);
  await late.stop();
  await locked.stop();
});

test('preview reads messages of a JetStream stream without writing or acknowledging', async () => {
  const r = await call('POST', '/v1beta2/source/preview', {
    type: 'nats_jetstream',
    properties: { url: nats.url, stream: 'ORDERS' },
    size: 3,
    timeout: '5s',
  });
  assert.equal(r.status, 200);
  const events = r.json() as Array<{ k: number }>;
  assert.equal(events.length, 3);
  assert.ok(events.every((e) => typeof e.k === 'number'));
  const badUrl = await call('POST', '/v1beta2/source/preview', {
    type: 'nats',
    properties: { url: 'http://x', subject: 's' },
  });
  assert.equal(badUrl.status, 400);
});
