/**
 * Sources through the REST API with the stream_generator type: create writes events into the
 * target stream through ingest (the count grows), stats count them, stop halts it, patch/put only
 * while stopped (409 otherwise), bad input names the property, preview answers events without
 * writing, a running source starts again after a restart, delete removes it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.close();
});

async function sql(q: string): Promise<void> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql: q } });
  assert.equal(r.statusCode, 204, r.body);
}

async function count(stream: string): Promise<number> {
  const r = await h.call('POST', '/v1beta2/exec', {
    body: { sql: `SELECT count() FROM table(${stream})`, type: 'historical' },
  });
  assert.equal(r.statusCode, 200, r.body);
  const body = r.json() as { data?: unknown[][] } | unknown[][];
  const rows = Array.isArray(body) ? body : (body.data ?? []);
  return Number((rows[0] as unknown[])[0]);
}

/** Wait until `stream` holds more than `n` rows (no time threshold: the count must grow). */
async function grows(stream: string, n: number): Promise<number> {
  for (let i = 0; i < 400; i++) {
    const c = await count(stream);
    if (c > n) return c;
    await sleep(50);
  }
  assert.fail(`${stream} did not grow past ${n}`);
}

const iotColumns = '(device string, number int32, temperature float64, humidity float64, location string)';

test('a stream_generator source writes iot events into its stream; stats count them; stop halts it', async () => {
  await sql(`CREATE STREAM gen_iot ${iotColumns}`);
  const created = await h.call('POST', '/v1beta2/sources', {
    body: {
      name: 'gen_iot_src',
      type: 'stream_generator',
      stream: 'gen_iot',
      properties: { template: 'iot', eps: 200 },
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const src = created.json() as { id: string; status: string; name: string };
  assert.equal(src.status, 'running');
  const first = await grows('gen_iot', 0);
  await grows('gen_iot', first);

  const stats = await h.call(
    'GET',
    `/v1beta2/sources/${src.id}/stats?error_log_time_range=1d&metrics_time_range=10m`,
  );
  assert.equal(stats.statusCode, 200, stats.body);
  const s = stats.json() as {
    success_count: number;
    failure_count: number;
    throughput: unknown[];
    uptime: number;
  };
  assert.ok(s.success_count > 0 && s.failure_count === 0 && s.throughput.length > 0, stats.body);

  const patchRunning = await h.call('PATCH', `/v1beta2/sources/${src.id}`, { body: { description: 'x' } });
  assert.equal(patchRunning.statusCode, 409, patchRunning.body);

  assert.equal((await h.call('POST', `/v1beta2/sources/${src.id}/stop`)).statusCode, 204);
  assert.equal((await h.call('GET', `/v1beta2/sources/${src.id}`)).json().status, 'stopped');
  const stopped = await count('gen_iot');
  await sleep(300);
  assert.equal(await count('gen_iot'), stopped, 'a stopped source writes nothing');

  const patched = await h.call('PATCH', `/v1beta2/sources/${src.id}`, {
    body: { description: 'iot demo', properties: { template: 'iot', interval: '10ms' } },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  assert.equal(patched.json().description, 'iot demo');
  const listed = (await h.call('GET', '/v1beta2/sources')).json() as Array<{ name: string }>;
  assert.ok(listed.some((x) => x.name === 'gen_iot_src'));
});

test('bad input names the property; preview answers events and writes nothing', async () => {
  await sql('CREATE STREAM gen_bad (device string)');
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ name: '1bad', type: 'stream_generator', stream: 'gen_bad', properties: { template: 'iot' } }, /name/],
    [{ name: 'ok_name', type: 'kafka', stream: 'gen_bad', properties: {} }, /type/],
    [
      { name: 'ok_name', type: 'stream_generator', stream: 'missing', properties: { template: 'iot' } },
      /stream/,
    ],
    [
      { name: 'ok_name', type: 'stream_generator', stream: 'gen_bad', properties: { template: 'weather' } },
      /properties\.template/,
    ],
    [
      {
        name: 'ok_name',
        type: 'stream_generator',
        stream: 'gen_bad',
        properties: { template: 'iot', eps: 'fast' },
      },
      /properties\.eps/,
    ],
    [
      {
        name: 'ok_name',
        type: 'stream_generator',
        stream: 'gen_bad',
        properties: { template: 'iot', colour: 1 },
      },
      /properties\.colour/,
    ],
  ];
  for (const [body, property] of cases) {
    const r = await h.call('POST', '/v1beta2/sources', { body });
    assert.equal(r.statusCode, 400, `${JSON.stringify(body)} -> ${r.body}`);
    assert.match(r.json().message, property);
  }
  const preview = await h.call('POST', '/v1beta2/source/preview', {
    body: { type: 'stream_generator', properties: { template: 'devops' }, size: 3 },
  });
  assert.equal(preview.statusCode, 200, preview.body);
  const events = preview.json() as Array<Record<string, unknown>>;
  assert.equal(events.length, 3);
  assert.ok(events.every((e) => typeof e.hostname === 'string' && typeof e.cpu_usage === 'number'));
});

test('a running source starts again after a restart; delete removes it', async () => {
  await sql(
    'CREATE STREAM gen_logins (user_id string, ip string, browser string, city string, success bool)',
  );
  const created = await h.call('POST', '/v1beta2/sources', {
    body: {
      name: 'gen_logins_src',
      type: 'stream_generator',
      stream: 'gen_logins',
      properties: { template: 'user_logins', eps: 100 },
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = (created.json() as { id: string }).id;
  const before = await grows('gen_logins', 0);
  h = await h.restart();
  assert.equal((await h.call('GET', `/v1beta2/sources/${id}`)).json().status, 'running');
  await grows('gen_logins', before);
  // The stream a source writes into is not dropped (SQL or REST) while the source exists.
  const dropSql = await h.call('POST', '/v1beta2/queries', { body: { sql: 'DROP STREAM gen_logins' } });
  assert.equal(dropSql.statusCode, 409, dropSql.body);
  assert.match(dropSql.json().message, /source gen_logins_src/);
  assert.equal((await h.call('DELETE', '/v1beta2/streams/gen_logins')).statusCode, 409);
  assert.equal((await h.call('DELETE', `/v1beta2/sources/${id}`)).statusCode, 204);
  await sql('DROP STREAM gen_logins');
  assert.equal((await h.call('GET', `/v1beta2/sources/${id}`)).statusCode, 404);
});
