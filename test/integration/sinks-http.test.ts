/**
 * Sinks through the REST API against real local HTTP receivers (node:http on 127.0.0.1): every row
 * of the sink's streaming query arrives exactly once (by idempotency key and by row), also across a
 * stop/start, a receiver failing with 5xx for a while, a patch that restarts the pipeline and a
 * server restart; the Slack payload shape and Retry-After; bad input named in a 400; an unreachable
 * receiver recorded in stats while the server keeps serving; the topology shows the sink.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { HttpReceiver } from '../helpers/http-receiver.ts';

let h: Harness;
let rx: HttpReceiver;
before(async () => {
  h = await startHarness({ tuning: { mvRetry: { baseMs: 20, maxMs: 200 } } });
  rx = await HttpReceiver.start();
});
after(async () => {
  await rx.close();
  await h.close();
});

async function sql(q: string): Promise<void> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql: q } });
  assert.equal(r.statusCode, 204, r.body);
}

async function ingest(stream: string, from: number, n: number): Promise<void> {
  const data = Array.from({ length: n }, (_, i) => [from + i, `v${from + i}`]);
  const r = await h.call('POST', `/v1beta2/streams/${stream}/ingest`, {
    body: { columns: ['id', 'v'], data },
  });
  assert.ok(r.statusCode < 300, r.body);
}

async function createSink(body: Record<string, unknown>): Promise<{ id: string; status: string }> {
  const r = await h.call('POST', '/v1beta2/sinks', { body });
  assert.equal(r.statusCode, 201, r.body);
  return r.json() as { id: string; status: string };
}

const at = (path: string) => rx.accepted().filter((r) => r.path === path);

/** Accepted rows of requests to `path`, and their idempotency keys. */
function delivered(path: string) {
  const reqs = rx.accepted().filter((r) => r.path === path);
  const keys = reqs.map((r) => String(r.headers['idempotency-key']));
  const ids = reqs.flatMap((r) =>
    r.body
      .split('\n')
      .filter(Boolean)
      .map((l) => Number((JSON.parse(l) as { id: number }).id)),
  );
  return { reqs, keys, ids };
}

function assertExactlyOnce(path: string, n: number): void {
  const { keys, ids } = delivered(path);
  assert.equal(new Set(keys).size, keys.length, `a key was accepted twice: ${keys.join(' ')}`);
  assert.deepEqual(
    [...ids].sort((a, b) => a - b),
    Array.from({ length: n }, (_, i) => i),
  );
}

const upTo = (path: string, n: number) => () => delivered(path).ids.length >= n;

test('an http sink delivers every row once, in batches, with headers and idempotency keys; stop/start and a failing receiver lose and double nothing', async () => {
  await sql('CREATE STREAM sink_src (id int, v string)');
  const sink = await createSink({
    name: 'to_http',
    type: 'http',
    query: 'SELECT id, v FROM sink_src',
    properties: {
      url: `${rx.url}/a`,
      headers: { Authorization: 'Bearer s3cret', 'X-Team': 'data' },
      batch_size: 5,
      retry_backoff_ms: 10,
      retry_backoff_max_ms: 50,
    },
    description: 'rows to a receiver',
  });
  assert.equal(sink.status, 'running');
  await ingest('sink_src', 0, 12);
  await rx.until(upTo('/a', 12), '12 rows at /a');
  assertExactlyOnce('/a', 12);
  const first = delivered('/a').reqs[0];
  assert.equal(first?.method, 'POST');
  assert.equal(first?.headers['content-type'], 'application/x-ndjson');
  assert.equal(first?.headers.authorization, 'Bearer s3cret');
  assert.equal(first?.headers['x-team'], 'data');
  assert.match(String(first?.headers['idempotency-key']), new RegExp(`^${sink.id}-\\d+-\\d+-\\d+$`));
  assert.ok(delivered('/a').reqs.every((r) => r.body.split('\n').filter(Boolean).length <= 5));
  assert.deepEqual(JSON.parse(first?.body.split('\n')[0] ?? ''), { id: 0, v: 'v0' });

  // GET masks credentials; list has it.
  const got = (await h.call('GET', `/v1beta2/sinks/${sink.id}`)).json() as {
    properties: { headers: Record<string, string>; url: string };
    query: string;
  };
  assert.equal(got.properties.headers.Authorization, '******');
  assert.equal(got.properties.headers['X-Team'], 'data');
  assert.equal(got.query, 'SELECT id, v FROM sink_src');
  const listed = (await h.call('GET', '/v1beta2/sinks')).json() as { name: string }[];
  assert.ok(listed.some((s) => s.name === 'to_http'));

  // Stop: nothing is sent; start: what was committed meanwhile arrives, once.
  // By name works as by id.
  assert.equal((await h.call('POST', '/v1beta2/sinks/to_http/stop')).statusCode, 204);
  assert.equal((await h.call('GET', `/v1beta2/sinks/${sink.id}`)).json().status, 'stopped');
  const before = rx.requests.length;
  await ingest('sink_src', 12, 8);
  assert.equal(rx.requests.length, before, 'a stopped sink sends nothing');
  assert.equal((await h.call('POST', `/v1beta2/sinks/${sink.id}/start`)).statusCode, 204);
  await rx.until(upTo('/a', 20), '20 rows at /a');
  assertExactlyOnce('/a', 20);

  // The receiver fails (503) for four requests, then heals: retried, nothing lost or doubled.
  let failing = 4;
  rx.answer = (r) => (r.path === '/a' && failing-- > 0 ? { status: 503 } : 'ok');
  await ingest('sink_src', 20, 10);
  await rx.until(upTo('/a', 30), '30 rows at /a');
  assertExactlyOnce('/a', 30);
  rx.answer = () => 'ok';
  const failedKeys = rx.requests
    .filter((r) => r.path === '/a' && r.status === 503)
    .map((r) => r.headers['idempotency-key']);
  assert.equal(failedKeys.length, 4);
  // A retried batch carries the key of its failed attempts.
  assert.ok(failedKeys.every((k) => delivered('/a').keys.includes(String(k))));

  // The receiver counts a batch when it answers; the sink when it has read the answer.
  let stats = await h.call(
    'GET',
    `/v1beta2/sinks/${sink.id}/stats?error_log_time_range=1d&metrics_time_range=10m`,
  );
  for (let i = 0; i < 100 && stats.json().success_count < 30; i++) {
    await new Promise((r) => setTimeout(r, 20));
    stats = await h.call(
      'GET',
      `/v1beta2/sinks/${sink.id}/stats?error_log_time_range=1d&metrics_time_range=10m`,
    );
  }
  assert.equal(stats.statusCode, 200, stats.body);
  const s = stats.json() as {
    success_count: number;
    failure_count: number;
    errors: { message: string }[];
    throughput: unknown[];
    status: string;
  };
  assert.equal(s.success_count, 30);
  assert.ok(s.failure_count > 0, stats.body);
  assert.ok(
    s.errors.some((e) => /503/.test(e.message)),
    stats.body,
  );
  assert.ok(s.throughput.length > 0);
  assert.equal(s.status, 'ExecutingPipeline');
  const logs = await h.call('GET', `/v1beta2/sinks/${sink.id}/logs?lines=1000`);
  assert.equal(logs.statusCode, 200, logs.body);
  const lines = logs.json() as string[];
  assert.ok(
    lines.some((l) => / WARN delivery of \d+ rows failed .*503/.test(l)),
    logs.body,
  );
  assert.ok(
    lines.some((l) => / INFO delivery recovered/.test(l)),
    logs.body,
  );
  assert.ok(
    lines.some((l) => / INFO stopped$/.test(l)),
    logs.body,
  );
  assert.ok(!logs.body.includes('s3cret'), logs.body);
  assert.equal((await h.call('GET', `/v1beta2/sinks/${sink.id}/logs?lines=2`)).json().length, 2);

  // The stream it reads is not dropped under it.
  const drop = await h.call('POST', '/v1beta2/queries', { body: { sql: 'DROP STREAM sink_src' } });
  assert.equal(drop.statusCode, 409, drop.body);
  assert.match(drop.json().message, /sink to_http/);

  // Topology: the sink with an edge from the stream it reads.
  const topo = (await h.call('GET', '/v1beta2/topology')).json() as {
    nodes: { id: string; type: string }[];
    edges: { source: string; target: string }[];
  };
  assert.ok(topo.nodes.some((n) => n.id === `sink:${sink.id}` && n.type === 'sink'));
  assert.ok(topo.edges.some((e) => e.source === 'stream:default.sink_src' && e.target === `sink:${sink.id}`));

  // PATCH to a new URL restarts the pipeline and keeps its checkpoint: only new rows go to /b.
  const patched = await h.call('PATCH', `/v1beta2/sinks/${sink.id}`, {
    body: { properties: { url: `${rx.url}/b`, batch_size: 3 }, description: 'moved' },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  assert.equal(patched.json().description, 'moved');
  await ingest('sink_src', 30, 4);
  await rx.until(() => delivered('/b').ids.length >= 4, '4 rows at /b');
  assert.deepEqual(
    delivered('/b').ids.sort((a, b) => a - b),
    [30, 31, 32, 33],
  );

  // A restart of the server: the sink starts again where it was; nothing is resent.
  await h.stop();
  h = await h.restart();
  await ingest('sink_src', 34, 3);
  await rx.until(() => delivered('/b').ids.length >= 7, '7 rows at /b');
  assert.deepEqual(
    delivered('/b').ids.sort((a, b) => a - b),
    [30, 31, 32, 33, 34, 35, 36],
  );
  assertExactlyOnce('/a', 30);

  assert.equal((await h.call('DELETE', `/v1beta2/sinks/${sink.id}`)).statusCode, 204);
  assert.equal((await h.call('GET', `/v1beta2/sinks/${sink.id}`)).statusCode, 404);
});

test('a slack sink posts {"text": ...} filled from each row, paced, and honours 429 Retry-After', async () => {
  await sql('CREATE STREAM alerts (id int, v string)');
  let limited = 1;
  rx.answer = (r) =>
    r.path === '/slack' && limited-- > 0 ? { status: 429, headers: { 'retry-after': '1' } } : 'ok';
  const sink = await createSink({
    name: 'to_slack',
    type: 'slack',
    query: 'SELECT id, v FROM alerts',
    properties: { url: `${rx.url}/slack`, messages: 'alert {{.id}}: {{ .v }}!', min_interval_ms: 20 },
  });
  await ingest('alerts', 0, 3);
  await rx.until(() => rx.accepted().filter((r) => r.path === '/slack').length >= 3, '3 slack messages');
  rx.answer = () => 'ok';
  const posts = rx.accepted().filter((r) => r.path === '/slack');
  assert.equal(posts.length, 3);
  for (const p of posts) assert.equal(p.headers['content-type'], 'application/json');
  assert.deepEqual(
    posts.map((p) => JSON.parse(p.body)),
    [{ text: 'alert 0: v0!' }, { text: 'alert 1: v1!' }, { text: 'alert 2: v2!' }],
  );
  assert.equal(rx.requests.filter((r) => r.path === '/slack' && r.status === 429).length, 1);
  await h.call('DELETE', `/v1beta2/sinks/${sink.id}`);
});

test('a sink over a global aggregation sends each emitted result', async () => {
  await sql('CREATE STREAM agg_src (id int, v string)');
  const sink = await createSink({
    name: 'agg_sink',
    type: 'http',
    query: 'SELECT count() AS n, sum(id) AS total FROM agg_src EMIT PERIODIC 100ms',
    properties: { url: `${rx.url}/agg` },
  });
  await ingest('agg_src', 1, 4);
  const last = () => {
    const rows = at('/agg').flatMap((r) => r.body.split('\n').filter(Boolean));
    return rows.length ? (JSON.parse(rows.at(-1) as string) as { n: number; total: number }) : undefined;
  };
  await rx.until(() => last()?.n === 4, 'the count of 4 rows');
  assert.deepEqual(last(), { n: 4, total: 10 });
  await h.call('DELETE', `/v1beta2/sinks/${sink.id}`);
});

test('bad input: unknown type, missing or ill-typed properties, a template column the query lacks, a historical query', async () => {
  await sql('CREATE STREAM bad_src (id int, v string)');
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ type: 'kafka', properties: { url: rx.url } }, /type/],
    [{ type: 'http', properties: {} }, /properties\.url/],
    [{ type: 'http', properties: { url: 'ftp://x' } }, /properties\.url/],
    [{ type: 'http', properties: { url: rx.url, batch_size: 'ten' } }, /properties\.batch_size/],
    [{ type: 'http', properties: { url: rx.url, headers: { A: 1 } } }, /properties\.headers\.A/],
    [{ type: 'http', properties: { url: rx.url, colour: 'red' } }, /properties\.colour/],
    [{ type: 'slack', properties: { url: rx.url, messages: 'x {{.nope}}' } }, /properties\.messages.*nope/],
    [{ type: 'http', properties: { url: rx.url }, query: 'SELECT * FROM table(bad_src)' }, /query/],
    [{ type: 'http', properties: { url: rx.url }, name: '9lives' }, /name/],
  ];
  for (const [body, why] of cases) {
    const r = await h.call('POST', '/v1beta2/sinks', {
      body: { name: 'bad_sink', query: 'SELECT id, v FROM bad_src', ...body },
    });
    assert.equal(r.statusCode, 400, `${JSON.stringify(body)} -> ${r.body}`);
    const e = r.json() as { code: number; message: string; system: string };
    assert.match(e.message, why, r.body);
    assert.ok(e.code && e.system, r.body);
  }
  const missing = await h.call('POST', '/v1beta2/sinks', { body: { name: 'x', type: 'http' } });
  assert.equal(missing.statusCode, 400);
  assert.equal((await h.call('GET', '/v1beta2/sinks')).json().length, 0);
});

test('an unreachable receiver: the sink records the error in its stats and keeps retrying; the server is unharmed', async () => {
  await sql('CREATE STREAM far_src (id int, v string)');
  const gone = await HttpReceiver.start();
  const url = `${gone.url}/x`;
  await gone.close();
  const sink = await createSink({
    name: 'to_nowhere',
    type: 'http',
    query: 'SELECT id, v FROM far_src',
    properties: { url, retry_backoff_ms: 10, retry_backoff_max_ms: 40, timeout_ms: 2000 },
  });
  await ingest('far_src', 0, 2);
  let s: { failure_count: number; errors: { message: string }[]; success_count: number } | undefined;
  for (let i = 0; i < 200; i++) {
    s = (await h.call('GET', `/v1beta2/sinks/${sink.id}/stats`)).json();
    if ((s?.failure_count ?? 0) >= 4) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok((s?.failure_count ?? 0) >= 4, JSON.stringify(s));
  assert.match(s?.errors.at(-1)?.message ?? '', /ECONNREFUSED/);
  assert.equal(s?.success_count, 0);
  const got = (await h.call('GET', `/v1beta2/sinks/${sink.id}`)).json() as {
    status: string;
    message: string;
  };
  assert.equal(got.status, 'running');
  assert.match(got.message, /ECONNREFUSED/);
  // Other work goes on.
  const info = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT count() FROM table(far_src)', type: 'historical' },
  });
  assert.equal(info.statusCode, 200, info.body);
  assert.equal((await h.call('DELETE', `/v1beta2/sinks/${sink.id}`)).statusCode, 204);
});
