import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, authHeader, type Credentials, type Harness, startHarness } from '../helpers/harness.ts';
import { readSse } from '../helpers/sse.ts';

let h: Harness;
const READER: Credentials = { user: 'reader', password: 'reader-password' };

before(async () => {
  h = await startHarness();
  const r = await h.call('POST', '/v1beta2/users', {
    body: { username: 'reader', password: 'reader-password', role: 'read_only' },
  });
  assert.equal(r.statusCode, 201);
});
after(async () => {
  await h.close();
});

let listening: string | undefined;

/** The base URL of the API on a real socket (for reading SSE as it arrives). */
async function apiBase(): Promise<string> {
  listening ??= `${await h.trb.listen()}/default/api`;
  return listening;
}

/** Run one statement through POST /queries; answers the status and body (SSE text or JSON). */
async function sql(text: string): Promise<{ status: number; body: string; json: () => ErrorBody }> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql: text } });
  return { status: r.statusCode, body: r.body, json: () => r.json<ErrorBody>() };
}

interface ErrorBody {
  code: number;
  message: string;
}

async function ok(text: string): Promise<void> {
  const r = await sql(text);
  assert.ok(r.status === 204 || r.status === 200, `${text}: ${r.status} ${r.body}`);
}

async function fails(text: string, status: number, code: number, message?: RegExp): Promise<void> {
  const r = await sql(text);
  assert.equal(r.status, status, `${text}: ${r.body}`);
  assert.equal(r.json().code, code, `${text}: ${r.body}`);
  if (message) assert.match(r.json().message, message);
}

/** Rows of a bounded query (SHOW, historical SELECT) through POST /queries. */
async function rows(text: string): Promise<unknown[][]> {
  const r = await sql(text);
  assert.equal(r.status, 200, `${text}: ${r.body}`);
  const out: unknown[][] = [];
  for (const block of r.body.split('\n\n')) {
    const lines = block.split('\n');
    if (lines.some((l) => l.startsWith('event: '))) continue;
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    if (data.length) out.push(...(JSON.parse(data.join('\n')) as unknown[][]));
  }
  return out;
}

async function historical(
  text: string,
): Promise<{ columns: { name: string; type: string }[]; data: unknown[][] }> {
  const r = await h.call('POST', '/v1beta2/exec', { body: { sql: text, type: 'historical' } });
  assert.equal(r.statusCode, 200, `${text}: ${r.body}`);
  return r.json();
}

async function ingest(stream: string, columns: string[], data: unknown[][], db?: string): Promise<void> {
  const r = await h.call('POST', `/v1beta2/streams/${stream}/ingest${db ? `?db=${db}` : ''}`, {
    body: { columns, data },
  });
  assert.equal(r.statusCode, 200, r.body);
}

test('CREATE VIEW over a stream: SHOW VIEWS, SHOW CREATE VIEW, historical reads through it', async () => {
  await ok('CREATE STREAM clicks (id int32, url string, price float64, ref nullable(string))');
  await ingest(
    'clicks',
    ['id', 'url', 'price'],
    [
      [1, '/a', 5],
      [2, '/b', 20],
      [3, '/a', 30],
    ],
  );
  await ok(
    "CREATE VIEW big_clicks AS SELECT id, price, ref FROM clicks WHERE price > 10 COMMENT 'expensive'",
  );
  assert.deepEqual(await rows('SHOW VIEWS'), [['big_clicks']]);
  assert.deepEqual(await rows("SHOW VIEWS LIKE 'big%'"), [['big_clicks']]);
  assert.deepEqual(await rows("SHOW VIEWS LIKE 'x%'"), []);
  const [[statement]] = (await rows('SHOW CREATE VIEW big_clicks')) as [[string]];
  assert.equal(
    statement,
    "CREATE VIEW default.big_clicks AS\nSELECT id, price, ref FROM clicks WHERE price > 10\nCOMMENT 'expensive'",
  );
  assert.deepEqual(await rows('SHOW CREATE big_clicks'), [[statement]], 'SHOW CREATE <view> shows the view');
  const r = await historical('SELECT * FROM big_clicks ORDER BY id');
  assert.deepEqual(r.columns, [
    { name: 'id', type: 'int32' },
    { name: 'price', type: 'float64' },
    { name: 'ref', type: 'nullable(string)' },
  ]);
  assert.deepEqual(r.data, [
    [2, 20, null],
    [3, 30, null],
  ]);
  // DESCRIBE goes through the resolver too.
  assert.deepEqual(
    (await rows('DESCRIBE big_clicks')).map((row) => [row[0], row[1]]),
    [
      ['id', 'int32'],
      ['price', 'float64'],
      ['ref', 'nullable(string)'],
    ],
  );
});

test('a view over table(s) is bounded: a plain SELECT over it is historical and ends', async () => {
  await ok('CREATE VIEW url_counts AS SELECT url, count() AS n FROM table(clicks) GROUP BY url');
  const r = await sql('SELECT * FROM url_counts ORDER BY url');
  assert.equal(r.status, 200);
  const last = r.body.trim().split('\n\n').pop() ?? '';
  assert.match(last, /"status":"finished"/, 'the query finished by itself');
  assert.deepEqual(await rows('SELECT * FROM url_counts ORDER BY url'), [
    ['/a', 2],
    ['/b', 1],
  ]);
  const bounded = await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT * FROM url_counts' } });
  assert.equal(bounded.json().is_streaming, false);
  const streaming = await h.call('POST', '/v1beta2/sqlanalyze', {
    body: { sql: 'SELECT * FROM big_clicks' },
  });
  assert.equal(streaming.json().is_streaming, true);
  assert.equal(streaming.json().result_columns[0].is_view, true);
});

test('a streaming SELECT over a view sees only the rows the view lets through', async () => {
  await ok('CREATE STREAM readings (sensor string, temp float64)');
  await ok("CREATE VIEW hot_readings AS SELECT sensor, temp FROM readings WHERE temp > 50 AND sensor != 'x'");
  const base = await apiBase();
  const ac = new AbortController();
  const response = await fetch(`${base}/v1beta2/queries`, {
    method: 'POST',
    headers: { ...authHeader(ADMIN), 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      sql: 'SELECT sensor, temp FROM hot_readings',
      batching_policy: { count: 1, time_ms: 10 },
    }),
    signal: ac.signal,
  });
  assert.equal(response.status, 200);
  const events = readSse(response.body!);
  const first = (await events.next()).value!;
  assert.equal(first.event, 'query');
  const query = JSON.parse(first.data);
  assert.equal(query.analysis.is_streaming, true);
  await ingest(
    'readings',
    ['sensor', 'temp'],
    [
      ['a', 20],
      ['b', 70],
      ['x', 99],
      ['c', 51.5],
    ],
  );
  const seen: unknown[][] = [];
  while (seen.length < 2) {
    const e = (await events.next()).value!;
    if (e.event === 'message') seen.push(...(JSON.parse(e.data) as unknown[][]));
  }
  await ingest('readings', ['sensor', 'temp'], [['d', 80]]);
  while (seen.length < 3) {
    const e = (await events.next()).value!;
    if (e.event === 'message') seen.push(...(JSON.parse(e.data) as unknown[][]));
  }
  assert.deepEqual(seen, [
    ['b', 70],
    ['c', 51.5],
    ['d', 80],
  ]);
  assert.equal((await h.call('POST', `/v1beta2/queries/${query.id}/cancel`)).statusCode, 204);
  ac.abort();
});

test('inside a streaming query a bounded view is read like table(): a stream joins it', async () => {
  await ok('CREATE STREAM labels (k string, label string)');
  await ingest(
    'labels',
    ['k', 'label'],
    [
      ['a', 'A'],
      ['b', 'B'],
    ],
  );
  await ok('CREATE VIEW label_table AS SELECT k, label FROM table(labels)');
  await ok('CREATE STREAM hits (k string, n int32)');
  const base = await apiBase();
  const ac = new AbortController();
  const response = await fetch(`${base}/v1beta2/queries`, {
    method: 'POST',
    headers: { ...authHeader(ADMIN), 'content-type': 'application/json' },
    body: JSON.stringify({
      sql: 'SELECT hits.n, l.label FROM hits INNER JOIN label_table AS l ON hits.k = l.k',
      batching_policy: { count: 1, time_ms: 10 },
    }),
    signal: ac.signal,
  });
  const events = readSse(response.body!);
  const query = JSON.parse((await events.next()).value!.data);
  assert.equal(query.analysis.is_streaming, true);
  await ingest(
    'hits',
    ['k', 'n'],
    [
      ['a', 1],
      ['z', 2],
      ['b', 3],
    ],
  );
  const seen: unknown[][] = [];
  while (seen.length < 2) {
    const e = (await events.next()).value!;
    if (e.event === 'message') seen.push(...(JSON.parse(e.data) as unknown[][]));
  }
  assert.deepEqual(seen, [
    [1, 'A'],
    [3, 'B'],
  ]);
  await h.call('POST', `/v1beta2/queries/${query.id}/cancel`);
  ac.abort();
});

test('CREATE VIEW errors: unknown stream, taken names, syntax, unknown column, materialized, database', async () => {
  await fails('CREATE VIEW v_err AS SELECT * FROM no_such_stream', 404, 60, /no_such_stream/);
  await fails(
    'CREATE VIEW v_err AS SELECT * FROM clicks WHERE id IN (SELECT id FROM nope2)',
    404,
    60,
    /nope2/,
  );
  await fails('CREATE VIEW clicks AS SELECT 1', 409, 57, /clicks/);
  await fails('CREATE VIEW big_clicks AS SELECT 1', 409, 57, /big_clicks/);
  await ok('CREATE VIEW IF NOT EXISTS big_clicks AS SELECT 1');
  await ok('CREATE VIEW IF NOT EXISTS clicks AS SELECT 1');
  assert.deepEqual(
    (await historical('SELECT count() AS n FROM big_clicks')).data,
    [[2]],
    'IF NOT EXISTS kept the old view',
  );
  await fails('CREATE VIEW v_err AS SELEC * FROM clicks', 400, 62, /line 1, column/);
  await fails('CREATE VIEW v_err AS SELECT no_such_column FROM clicks', 400, 47, /no_such_column/);
  // A materialized view over an unknown stream (materialized views: materialized-views.test.ts).
  await fails('CREATE MATERIALIZED VIEW mv_err AS SELECT * FROM no_such_stream', 404, 60, /no_such_stream/);
  await fails('CREATE VIEW nodb.v_err AS SELECT 1', 404, 81, /nodb/);
  await fails('CREATE VIEW v_err (a int32) AS SELECT 1', 400, 48);
  await fails('CREATE STREAM big_clicks (a int)', 409, 57, /big_clicks/);
  const got = await h.call('GET', '/v1beta2/views/v_err');
  assert.equal(got.statusCode, 404, 'no failed CREATE left a view behind');
});

test('CREATE OR REPLACE VIEW replaces the query; a view cannot read itself', async () => {
  await ok('CREATE VIEW cheap AS SELECT id FROM clicks WHERE price < 10');
  const before = (await h.call('GET', '/v1beta2/views/cheap')).json();
  await ok('CREATE OR REPLACE VIEW cheap AS SELECT id, url FROM clicks WHERE price < 10');
  const afterReplace = (await h.call('GET', '/v1beta2/views/cheap')).json();
  assert.equal(afterReplace.id, before.id);
  assert.equal(afterReplace.query, 'SELECT id, url FROM clicks WHERE price < 10');
  assert.deepEqual(
    afterReplace.columns.map((c: { name: string }) => c.name),
    ['id', 'url'],
  );
  await ok('CREATE VIEW cheap_urls AS SELECT url FROM cheap');
  await fails('CREATE OR REPLACE VIEW cheap AS SELECT * FROM cheap_urls', 400, 80, /cannot read itself/);
  await fails('CREATE OR REPLACE VIEW cheap AS SELECT * FROM cheap', 400, 80, /cannot read itself/);
  await ok('DROP VIEW cheap_urls');
  await ok('DROP VIEW cheap');
});

test('dropping what a view reads is refused (630, as Proton); DROP VIEW and DROP STREAM of a view', async () => {
  await ok('CREATE VIEW on_view AS SELECT id FROM big_clicks');
  await fails('DROP STREAM clicks', 409, 630, /big_clicks/);
  const del = await h.call('DELETE', '/v1beta2/streams/clicks');
  assert.equal(del.statusCode, 409);
  assert.equal(del.json().code, 630);
  await fails('DROP VIEW big_clicks', 409, 630, /on_view/);
  await fails('DROP STREAM big_clicks', 409, 630, /on_view/);
  // RENAME of a view or stream something reads names the dependents first (as Proton).
  await fails('RENAME STREAM big_clicks TO tmp_name', 409, 630, /on_view/);
  await fails('RENAME STREAM clicks TO tmp_name', 409, 630, /big_clicks/);
  await fails('DROP VIEW no_view', 404, 60, /no_view/);
  await ok('DROP VIEW IF EXISTS no_view');
  await ok('DROP STREAM on_view');
  assert.equal((await h.call('GET', '/v1beta2/views/on_view')).statusCode, 404);
  await ok('CREATE VIEW on_view AS SELECT id FROM big_clicks');
  await ok('DROP VIEW on_view');
  assert.equal((await h.call('GET', '/v1beta2/views/on_view')).statusCode, 404);
});

test('views live in databases: unqualified names read the view’s database; DROP DATABASE drops its views', async () => {
  await ok('CREATE DATABASE vdb');
  await ok('CREATE STREAM vdb.events (k string, n int64)');
  await ingest(
    'events',
    ['k', 'n'],
    [
      ['a', 1],
      ['b', 2],
    ],
    'vdb',
  );
  await ok('CREATE VIEW vdb.big_events AS SELECT k, n FROM events WHERE n > 1');
  assert.deepEqual((await historical('SELECT k FROM vdb.big_events')).data, [['b']]);
  assert.deepEqual(await rows('SHOW VIEWS FROM vdb'), [['big_events']]);
  const listed = (await h.call('GET', '/v1beta2/views?db=vdb')).json();
  assert.deepEqual(
    listed.map((v: { name: string }) => v.name),
    ['big_events'],
  );
  assert.ok(!(await rows('SHOW VIEWS')).some((r) => r[0] === 'big_events'));
  const got = await h.call('GET', '/v1beta2/views/big_events?db=vdb');
  assert.equal(got.statusCode, 200);
  assert.equal(got.json().create_query, 'CREATE VIEW vdb.big_events AS\nSELECT k, n FROM events WHERE n > 1');
  assert.equal((await h.call('GET', '/v1beta2/views/big_events')).statusCode, 404);
  // A view elsewhere reading into vdb keeps the database from being dropped.
  await ok('CREATE VIEW outside_vdb AS SELECT k FROM vdb.big_events');
  await fails('DROP DATABASE vdb', 409, 630, /outside_vdb/);
  await ok('DROP VIEW outside_vdb');
  await ok('DROP DATABASE vdb');
  assert.deepEqual((await h.call('GET', '/v1beta2/views?db=vdb')).json(), []);
  await ok('CREATE DATABASE vdb');
  await ok('CREATE STREAM vdb.big_events (a int)');
  await ok('DROP DATABASE vdb');
});

test('REST: create, get, list, patch, delete; the View shape', async () => {
  let r = await h.call('POST', '/v1beta2/views', {
    body: { name: 'rest_view', query: 'SELECT id, url, ref FROM clicks WHERE id > 1', description: 'd1' },
  });
  assert.equal(r.statusCode, 201, r.body);
  const created = r.json();
  assert.equal(typeof created.id, 'string');
  assert.ok(created.id.length > 0);
  assert.deepEqual(
    { ...created, id: undefined, created_at: undefined, last_updated_at: undefined },
    {
      id: undefined,
      name: 'rest_view',
      description: 'd1',
      query: 'SELECT id, url, ref FROM clicks WHERE id > 1',
      create_query:
        "CREATE VIEW default.rest_view AS\nSELECT id, url, ref FROM clicks WHERE id > 1\nCOMMENT 'd1'",
      target_stream: '',
      ttl: '',
      ttl_expression: '',
      columns: [
        { name: 'id', type: 'int32', nullable: false, default: '', comment: '', codec: '' },
        { name: 'url', type: 'string', nullable: false, default: '', comment: '', codec: '' },
        { name: 'ref', type: 'nullable(string)', nullable: true, default: '', comment: '', codec: '' },
      ],
      materialized: false,
      logstore_retention_bytes: 0,
      logstore_retention_ms: 0,
      created_at: undefined,
      created_by: { id: 'admin', name: 'admin' },
      last_updated_at: undefined,
      last_updated_by: { id: 'admin', name: 'admin' },
    },
  );
  assert.match(created.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

  r = await h.call('GET', '/v1beta2/views/rest_view');
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), created);
  r = await h.call('GET', '/v1beta2/views');
  assert.ok(r.json().some((v: { name: string }) => v.name === 'rest_view'));
  assert.ok(r.json().every((v: { materialized: boolean }) => v.materialized === false));

  r = await h.call('PATCH', '/v1beta2/views/rest_view', {
    body: { description: 'd2', query: 'SELECT id, price FROM clicks' },
  });
  assert.equal(r.statusCode, 204, r.body);
  const patched = (await h.call('GET', '/v1beta2/views/rest_view')).json();
  assert.equal(patched.description, 'd2');
  assert.equal(patched.query, 'SELECT id, price FROM clicks');
  assert.deepEqual(
    patched.columns.map((c: { name: string; type: string }) => [c.name, c.type]),
    [
      ['id', 'int32'],
      ['price', 'float64'],
    ],
  );
  assert.equal(patched.created_at, created.created_at);
  assert.deepEqual((await historical('SELECT count() FROM rest_view')).data, [[3]]);

  r = await h.call('PATCH', '/v1beta2/views/rest_view', { body: { description: 'only the description' } });
  assert.equal(r.statusCode, 204);
  assert.equal(
    (await h.call('GET', '/v1beta2/views/rest_view')).json().query,
    'SELECT id, price FROM clicks',
  );

  r = await h.call('DELETE', '/v1beta2/views/rest_view');
  assert.equal(r.statusCode, 204);
  assert.equal((await h.call('GET', '/v1beta2/views/rest_view')).statusCode, 404);
});

test('REST errors: every refusal names its reason', async () => {
  const post = (body: unknown, db?: string) =>
    h.call('POST', `/v1beta2/views${db ? `?db=${db}` : ''}`, { body });
  const expect = async (
    r: Awaited<ReturnType<typeof post>>,
    status: number,
    code: number,
    message?: RegExp,
  ): Promise<void> => {
    assert.equal(r.statusCode, status, r.body);
    assert.equal(r.json().code, code, r.body);
    if (message) assert.match(r.json().message, message);
  };
  await expect(
    await post({ name: 'mv1', query: 'SELECT * FROM no_such_stream', materialized: true }),
    404,
    60,
    /no_such_stream/,
  );
  await expect(
    await post({ name: 'v1', query: 'SELECT * FROM clicks', target_stream: 'x' }),
    400,
    10102,
    /target_stream/,
  );
  await expect(
    await post({ name: 'v1', query: 'SELECT * FROM clicks', ttl_expression: 'x' }),
    400,
    10102,
    /ttl_expression/,
  );
  await expect(
    await post({ name: 'v1', query: 'SELECT * FROM clicks', logstore_retention_ms: 5 }),
    400,
    10102,
  );
  await expect(await post({ name: '1bad', query: 'SELECT 1' }), 400, 10102, /name/);
  await expect(await post({ query: 'SELECT 1' }), 400, 10102, /name/);
  await expect(await post({ name: 'v1' }), 400, 10102, /query/);
  await expect(await post({ name: 'v1', query: 'SELECT 1', colour: 'red' }), 400, 10102, /colour/);
  await expect(await post({ name: 'v1', query: 'SELEC 1' }), 400, 62, /line 1, column 1/);
  await expect(await post({ name: 'v1', query: 'CREATE STREAM q (a int)' }), 400, 62);
  await expect(await post({ name: 'v1', query: 'SELECT * FROM nope' }), 404, 60, /nope/);
  await expect(await post({ name: 'clicks', query: 'SELECT 1' }), 409, 57, /clicks/);
  await expect(await post({ name: 'big_clicks', query: 'SELECT 1' }), 409, 57, /big_clicks/);
  await expect(await post({ name: 'v1', query: 'SELECT 1' }, 'nodb'), 404, 81);
  // materialized: false with zero/empty storage fields is a plain view.
  let r = await post({
    name: 'v_plain',
    query: 'SELECT 1 AS one',
    materialized: false,
    target_stream: '',
    logstore_retention_bytes: 0,
  });
  assert.equal(r.statusCode, 201, r.body);
  assert.deepEqual(r.json().columns, [
    { name: 'one', type: 'uint8', nullable: false, default: '', comment: '', codec: '' },
  ]);

  await expect(await h.call('GET', '/v1beta2/views/nope'), 404, 60, /nope/);
  await expect(await h.call('DELETE', '/v1beta2/views/nope'), 404, 60);
  await expect(await h.call('PATCH', '/v1beta2/views/nope', { body: { description: 'x' } }), 404, 60);
  await expect(await h.call('PATCH', '/v1beta2/views/v_plain', { body: { query: 'SELEC' } }), 400, 62);
  await expect(
    await h.call('PATCH', '/v1beta2/views/v_plain', { body: { query: 'SELECT * FROM nope' } }),
    404,
    60,
  );
  await expect(
    await h.call('PATCH', '/v1beta2/views/v_plain', { body: { ttl_expression: 'x' } }),
    400,
    10102,
  );
  await expect(await h.call('PATCH', '/v1beta2/views/v_plain', { body: { name: 'x' } }), 400, 10102, /name/);
  await expect(
    await h.call('PATCH', '/v1beta2/views/v_plain', { body: { query: 'SELECT * FROM v_plain' } }),
    400,
    80,
  );
  assert.equal((await h.call('GET', '/v1beta2/views/v_plain')).json().query, 'SELECT 1 AS one');
  r = await post({ name: 'reads_big', query: 'SELECT id FROM big_clicks' });
  assert.equal(r.statusCode, 201);
  await expect(await h.call('DELETE', '/v1beta2/views/big_clicks'), 409, 630, /reads_big/);
  assert.equal((await h.call('DELETE', '/v1beta2/views/reads_big')).statusCode, 204);

  // read_only users may read views, not change them.
  assert.equal((await h.call('GET', '/v1beta2/views', { as: READER })).statusCode, 200);
  assert.equal((await h.call('GET', '/v1beta2/views/v_plain', { as: READER })).statusCode, 200);
  await expect(
    await h.call('POST', '/v1beta2/views', { body: { name: 'ro', query: 'SELECT 1' }, as: READER }),
    403,
    10003,
  );
  await expect(await h.call('DELETE', '/v1beta2/views/v_plain', { as: READER }), 403, 10003);
  r = await h.call('POST', '/v1beta2/queries', { body: { sql: 'CREATE VIEW ro AS SELECT 1' }, as: READER });
  await expect(r, 403, 10003);
  r = await h.call('POST', '/v1beta2/queries', { body: { sql: 'SHOW VIEWS' }, as: READER });
  assert.equal(r.statusCode, 200);
  await ok('DROP VIEW v_plain');
});

test('views survive a restart', async () => {
  await ok('CREATE VIEW persisted AS SELECT id, url FROM clicks WHERE id >= 2');
  const before = (await h.call('GET', '/v1beta2/views/persisted')).json();
  h = await h.restart();
  listening = undefined;
  const afterRestart = (await h.call('GET', '/v1beta2/views/persisted')).json();
  assert.deepEqual(afterRestart, before);
  assert.deepEqual((await historical('SELECT id FROM persisted ORDER BY id')).data, [[2], [3]]);
  assert.ok((await rows('SHOW VIEWS')).some((r) => r[0] === 'persisted'));
  await fails('DROP STREAM clicks', 409, 630, /persisted/);
  await fails('CREATE VIEW persisted AS SELECT 1', 409, 57);
  await ok('DROP VIEW persisted');
});
