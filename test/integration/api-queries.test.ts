import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';
import { collectSse, readSse } from '../helpers/sse.ts';

let h: Harness;
let base: string;
before(async () => {
  h = await startHarness();
  base = `${await h.trb.listen()}/default/api`;
});
after(async () => {
  await h.close();
});

function post(path: string, body: unknown, creds = ADMIN, signal?: AbortSignal) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...authHeader(creds), 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

test('a historical query streams: query event first, data batches, a final query event, then EOF', async () => {
  const r = await post('/v1beta2/queries', {
    sql: 'SELECT number AS n, toString(number) AS s FROM numbers(2500)',
    tags: ['t1'],
    batching_policy: { count: 1000, time_ms: 50 },
  });
  assert.equal(r.status, 200);
  assert.match(String(r.headers.get('content-type')), /^text\/event-stream/);
  const events = await collectSse(r.body!);
  const first = events[0]!;
  assert.equal(first.event, 'query');
  const q = JSON.parse(first.data);
  assert.equal(q.status, 'running');
  assert.deepEqual(q.result.header, [
    { name: 'n', type: 'uint64' },
    { name: 's', type: 'string' },
  ]);
  const data = events.filter((e) => e.event === 'message').map((e) => JSON.parse(e.data) as unknown[][]);
  assert.ok(
    data.every((batch) => batch.length <= 1000),
    'no batch exceeds batching_policy.count',
  );
  const rows = data.flat();
  assert.equal(rows.length, 2500);
  assert.deepEqual(rows[42], [42, '42']);
  const last = events[events.length - 1]!;
  assert.equal(last.event, 'query');
  const done = JSON.parse(last.data);
  assert.equal(done.status, 'finished');
  assert.ok(done.end_time >= done.start_time);
  assert.equal(done.duration, done.end_time - done.start_time);
  assert.ok(events.some((e) => e.event === 'metrics'));

  const listed = (await h.call('GET', '/v1beta2/queries?tag=t1')).json();
  assert.equal(listed.length, 1);
  assert.equal(listed[0].id, q.id);
  assert.equal((await h.call('GET', '/v1beta2/queries?tag=nope')).json().length, 0);
  const got = (await h.call('GET', `/v1beta2/queries/${q.id}`)).json();
  assert.equal(got.status, 'finished');
  const pipeline = (await h.call('GET', `/v1beta2/queries/${q.id}/pipeline`)).json();
  assert.equal(pipeline.nodes.length, 1);
  assert.ok(pipeline.nodes[0].metric.processed_bytes > 0);
});

test('inf, -inf, nan arrive as strings; 128-bit integers as strings; 64-bit integers keep every digit', async () => {
  const r = await post('/v1beta2/queries', {
    sql: 'SELECT inf AS a, -inf AS b, nan AS c, toInt128(5) AS d, toInt64(9007199254740993) AS e',
  });
  const events = await collectSse(r.body!);
  const data = events.find((e) => e.event === 'message')!.data;
  assert.equal(data.replace(/\s/g, ''), '[["inf","-inf","nan","5",9007199254740993]]');
});

test('a failing query answers a JSON error before any event', async () => {
  const r = await post('/v1beta2/queries', { sql: 'SELECT * FROM no_such_stream' });
  assert.equal(r.status, 404);
  const body = (await r.json()) as { code: number; system: string };
  assert.equal(body.code, 60);
  assert.equal(body.system, 'timeplusd');
});

test('a statement without a result answers 204', async () => {
  const r = await post('/v1beta2/queries', { sql: 'CREATE STREAM q1 (a int32)' });
  assert.equal(r.status, 204);
});

test('cancel stops a running query; the client sees the final query event with status canceled', async () => {
  const r = await post('/v1beta2/queries', {
    sql: 'SELECT sum(cityHash64(number)) FROM numbers(100000000000) SETTINGS max_threads = 1',
  });
  const it = readSse(r.body!);
  const first = (await it.next()).value!;
  const id = JSON.parse(first.data).id as string;
  assert.equal((await h.call('GET', `/v1beta2/queries/${id}`)).json().status, 'running');
  const del = await h.call('DELETE', `/v1beta2/queries/${id}`);
  assert.equal(del.statusCode, 409, 'a running query cannot be deleted');
  assert.equal((await h.call('POST', `/v1beta2/queries/${id}/cancel`)).statusCode, 204);
  let last = first;
  for await (const e of it) last = e;
  assert.equal(last.event, 'query');
  assert.equal(JSON.parse(last.data).status, 'canceled');
  assert.equal(
    (await h.call('POST', `/v1beta2/queries/${id}/cancel`)).statusCode,
    204,
    'cancel again is a no-op',
  );
  assert.equal((await h.call('GET', `/v1beta2/queries/${id}`)).json().status, 'canceled');
  assert.equal((await h.call('DELETE', `/v1beta2/queries/${id}`)).statusCode, 204);
  assert.equal((await h.call('GET', `/v1beta2/queries/${id}`)).statusCode, 404);
});

test('a client that disconnects cancels its query', async () => {
  const ac = new AbortController();
  const r = await post(
    '/v1beta2/queries',
    {
      sql: 'SELECT sum(cityHash64(number)) FROM numbers(100000000000) SETTINGS max_threads = 1',
      tags: ['dc'],
    },
    ADMIN,
    ac.signal,
  );
  const it = readSse(r.body!);
  const id = JSON.parse((await it.next()).value!.data).id as string;
  ac.abort();
  let status = '';
  for (let i = 0; i < 100 && status !== 'canceled'; i++) {
    await new Promise((res) => setTimeout(res, 50));
    status = (await h.call('GET', `/v1beta2/queries/${id}`)).json().status;
  }
  assert.equal(status, 'canceled');
});

test('/exec answers {columns, data} for historical SQL and 204 for DDL', async () => {
  let r = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'CREATE STREAM e1 (a int32, b string)', type: 'ddl' },
  });
  assert.equal(r.statusCode, 204);
  r = await h.call('POST', '/v1beta2/exec', {
    body: { sql: "INSERT INTO e1 VALUES (1, 'x'), (2, 'y')", type: 'ddl' },
  });
  assert.equal(r.statusCode, 204);
  r = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT a, b FROM e1 ORDER BY a', type: 'historical' },
  });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), {
    columns: [
      { name: 'a', type: 'int32' },
      { name: 'b', type: 'string' },
    ],
    data: [
      [1, 'x'],
      [2, 'y'],
    ],
  });
});

test('/exec timeout_ms stops the engine query', async () => {
  const r = await h.call('POST', '/v1beta2/exec', {
    body: {
      sql: 'SELECT sum(cityHash64(number)) FROM numbers(100000000000) SETTINGS max_threads = 1',
      type: 'historical',
      timeout_ms: 200,
    },
  });
  assert.equal(r.statusCode, 408);
  assert.equal(r.json().code, 159);
});

test('/exec validates its body', async () => {
  let r = await h.call('POST', '/v1beta2/exec', { body: { sql: 'SELECT 1' } });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /type/);
  r = await h.call('POST', '/v1beta2/exec', { body: { sql: 'SELECT 1', type: 'streaming' } });
  assert.equal(r.statusCode, 400);
  r = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT 1', type: 'historical', timeout_ms: 'soon' },
  });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /timeout_ms/);
});

test('read_only cancels and deletes only its own queries; an admin, anyone', async () => {
  const made = await h.call('POST', '/v1beta2/users', {
    body: { username: 'q_reader', password: 'reader-password', role: 'read_only' },
  });
  assert.equal(made.statusCode, 201);
  const reader = { user: 'q_reader', password: 'reader-password' };
  const slow = 'SELECT sum(cityHash64(number)) FROM numbers(100000000000) SETTINGS max_threads = 1';
  const start = async (creds: typeof ADMIN) => {
    const it = readSse((await post('/v1beta2/queries', { sql: slow }, creds)).body!);
    const id = JSON.parse((await it.next()).value!.data).id as string;
    return { id, it };
  };
  const drain = async (it: AsyncGenerator<unknown>) => {
    for await (const _ of it);
  };
  const admins = await start(ADMIN);
  // Another user's query: 403, without naming its owner; the query keeps running.
  for (const [method, path] of [
    ['POST', `/v1beta2/queries/${admins.id}/cancel`],
    ['DELETE', `/v1beta2/queries/${admins.id}`],
  ] as const) {
    const r = await h.call(method, path, { as: reader });
    assert.equal(r.statusCode, 403, `${method} ${path}`);
    assert.equal(r.json().code, 10003);
    assert.doesNotMatch(r.json().message, /\badmin\b/);
  }
  assert.equal(
    (await h.call('GET', `/v1beta2/queries/${admins.id}`, { as: reader })).json().status,
    'running',
  );
  // Its own query: cancel and delete.
  const own = await start(reader);
  assert.equal((await h.call('POST', `/v1beta2/queries/${own.id}/cancel`, { as: reader })).statusCode, 204);
  await drain(own.it);
  assert.equal((await h.call('DELETE', `/v1beta2/queries/${own.id}`, { as: reader })).statusCode, 204);
  // An admin cancels anyone's query; unknown ids stay 404 for everyone.
  const readers = await start(reader);
  assert.equal((await h.call('POST', `/v1beta2/queries/${readers.id}/cancel`)).statusCode, 204);
  await drain(readers.it);
  assert.equal((await h.call('POST', `/v1beta2/queries/${admins.id}/cancel`)).statusCode, 204);
  await drain(admins.it);
  assert.equal((await h.call('POST', '/v1beta2/queries/nope/cancel', { as: reader })).statusCode, 404);
});
