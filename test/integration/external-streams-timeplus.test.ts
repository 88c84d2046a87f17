/**
 * `CREATE EXTERNAL STREAM ... SETTINGS type='timeplus'` against a second Tributary on a real socket:
 * table() reads the remote stream's rows, a streaming SELECT follows new ones, INSERT writes through
 * the remote's ingest, preview reads earliest and latest, secrets are masked and never in errors, a
 * restart of the reading server neither loses nor repeats rows, bad settings are named.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD } from '../helpers/harness.ts';
import { freePort, type Run, serve, waitForInfo } from '../helpers/serve-process.ts';
import { StreamingApi } from '../helpers/streaming-client.ts';
import { assertError } from '../helpers/streams.ts';

/** The other server: `tributary serve` in a child process (the engine is one per process). */
class RemoteServer {
  private constructor(
    readonly base: string,
    private readonly run: Run,
    private readonly data: string,
  ) {}

  static async start(): Promise<RemoteServer> {
    const data = await mkdtemp(join(tmpdir(), 'tributary-remote-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/default/api`;
    const run = serve(['--port', String(port)], {
      TRIBUTARY_DATA: data,
      TRIBUTARY_LOG_LEVEL: 'warn',
      TRIBUTARY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    });
    await waitForInfo(`${base}/info`, run);
    return new RemoteServer(base, run, data);
  }

  async post(path: string, body: unknown): Promise<{ status: number; text: string }> {
    const r = await fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });
    return { status: r.status, text: await r.text() };
  }

  async ingest(stream: string, columns: string[], data: unknown[][]): Promise<void> {
    const r = await this.post(`/v1beta2/streams/${stream}/ingest`, { columns, data });
    assert.equal(r.status, 200, r.text);
  }

  async get(path: string): Promise<unknown> {
    const r = await fetch(`${this.base}${path}`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}` },
    });
    assert.equal(r.status, 200);
    return r.json();
  }

  async close(): Promise<void> {
    this.run.kill('SIGTERM');
    await this.run.exit;
    await rm(this.data, { recursive: true, force: true });
  }
}

let remote: RemoteServer;
let local: StreamingApi;

before(async () => {
  remote = await RemoteServer.start();
  local = await StreamingApi.open();
});

after(async () => {
  await local.close();
  await remote.close();
});

type Api = StreamingApi | RemoteServer;

async function ok(api: Api, sql: string): Promise<void> {
  if (api instanceof RemoteServer) {
    const r = await api.post('/v1beta2/exec', { sql, type: 'ddl' });
    assert.ok(r.status < 300, `${sql}: ${r.text}`);
    return;
  }
  const r = await api.h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
}

async function historical(api: Api, sql: string): Promise<unknown[][]> {
  if (api instanceof RemoteServer) {
    const r = await api.post('/v1beta2/exec', { sql, type: 'historical' });
    assert.equal(r.status, 200, `${sql}: ${r.text}`);
    return (JSON.parse(r.text) as { data: unknown[][] }).data;
  }
  const r = await api.h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  return (r.json() as { data: unknown[][] }).data;
}

async function eventually(api: Api, sql: string, expected: unknown[][], what: string): Promise<void> {
  let last: unknown[][] = [];
  for (let i = 0; i < 300; i++) {
    last = await historical(api, sql);
    if (JSON.stringify(last) === JSON.stringify(expected)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(last, expected, what);
}

const remoteBase = () => remote.base;

test('table() reads the remote stream, a streaming SELECT follows it, INSERT writes into it', async () => {
  await ok(remote, 'CREATE STREAM src (id int, v string)');
  await remote.ingest(
    'src',
    ['id', 'v'],
    [
      [0, 'v0'],
      [1, 'v1'],
      [2, 'v2'],
    ],
  );
  await ok(
    local,
    `CREATE EXTERNAL STREAM rsrc (id int, v string) SETTINGS type='timeplus', url='${remoteBase()}', stream='src', user='admin', password='${ADMIN_PASSWORD}'`,
  );
  await eventually(
    local,
    'SELECT id, v FROM table(rsrc) ORDER BY id',
    [
      [0, 'v0'],
      [1, 'v1'],
      [2, 'v2'],
    ],
    'the remote rows',
  );
  // Each row keeps the remote's event time.
  const times = await historical(
    remote,
    'SELECT id, to_unix_timestamp64_milli(_tp_time) FROM table(src) ORDER BY id',
  );
  await eventually(
    local,
    'SELECT id, to_unix_timestamp64_milli(_tp_time) FROM table(rsrc) ORDER BY id',
    times,
    'the remote _tp_time',
  );
  const tail = await local.start('SELECT id, v FROM rsrc');
  await remote.ingest(
    'src',
    ['id', 'v'],
    [
      [3, 'v3'],
      [4, 'v4'],
    ],
  );
  const rows = await tail.waitForRows(2);
  assert.deepEqual(rows, [
    [3, 'v3'],
    [4, 'v4'],
  ]);
  await tail.cancel();

  await ok(local, "INSERT INTO rsrc (id, v) VALUES (10, 'w')");
  await eventually(
    remote,
    'SELECT id, v FROM table(src) WHERE id = 10',
    [[10, 'w']],
    'written on the remote',
  );
  await eventually(local, 'SELECT count() FROM table(rsrc)', [[6]], 'and read back');

  // A materialized view INTO it delivers to the other server too.
  await ok(local, 'CREATE STREAM loc (id int, v string)');
  await ok(local, 'CREATE MATERIALIZED VIEW to_remote INTO rsrc AS SELECT id, v FROM loc');
  await local.ingest('loc', ['id', 'v'], [[20, 'mv']]);
  await eventually(remote, "SELECT id FROM table(src) WHERE v = 'mv'", [[20]], 'delivered by the view');
  await eventually(local, 'SELECT count() FROM table(rsrc)', [[7]], 'and read back once');
  await ok(local, 'DROP VIEW to_remote');

  const got = await local.h.call('GET', '/v1beta2/external_streams/rsrc');
  assert.equal(got.statusCode, 200, got.body);
  assert.ok(!got.body.includes(ADMIN_PASSWORD), 'the password is masked');
  assert.match(got.body, /password = '\*\*\*\*\*\*'/);
});

test('preview reads earliest and latest rows of the remote stream; a wrong password is a 502 without secrets', async () => {
  const settings = [
    { key: 'type', value: 'timeplus' },
    { key: 'url', value: remoteBase() },
    { key: 'stream', value: 'src' },
    { key: 'user', value: 'admin' },
    { key: 'password', value: ADMIN_PASSWORD },
  ];
  const columns = [
    { name: 'id', type: 'int' },
    { name: 'v', type: 'string' },
  ];
  const earliest = await local.h.call('POST', '/v1beta2/external_streams/preview', {
    body: { settings, columns, count: 2, offset: 'earliest', timeout: 30 },
  });
  assert.equal(earliest.statusCode, 200, earliest.body);
  const events = earliest.json() as { id: number; v: string; _tp_time: string }[];
  assert.deepEqual(
    events.map((e) => [e.id, e.v]),
    [
      [0, 'v0'],
      [1, 'v1'],
    ],
  );
  assert.ok(events.every((e) => typeof e._tp_time === 'string'));

  const pending = local.h.call('POST', '/v1beta2/external_streams/preview', {
    body: { settings, columns, count: 1, offset: 'latest', timeout: 60 },
  });
  let done = false;
  const writer = (async () => {
    for (let i = 100; !done; i++) {
      await remote.ingest('src', ['id', 'v'], [[i, 'late']]);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const latest = await pending;
  done = true;
  await writer;
  assert.equal(latest.statusCode, 200, latest.body);
  assert.equal((latest.json() as { v: string }[])[0]?.v, 'late');

  const wrong = await local.h.call('POST', '/v1beta2/external_streams/preview', {
    body: {
      settings: [...settings.slice(0, 4), { key: 'password', value: 'not-the-password' }],
      columns,
      count: 1,
      offset: 'earliest',
      timeout: 10,
    },
  });
  assertError(wrong, 502, 10816, /401/);
  assert.ok(!wrong.body.includes('not-the-password'));
  const unreachable = await local.h.call('POST', '/v1beta2/external_streams/preview', {
    body: {
      settings: [settings[0], { key: 'hosts', value: '127.0.0.1:9' }, settings[2]],
      columns,
      timeout: 10,
    },
  });
  assertError(unreachable, 502, 10816);
});

test('a restart of the reading server neither loses nor repeats rows', async () => {
  await ok(remote, 'CREATE STREAM src2 (n int)');
  await remote.ingest('src2', ['n'], [[1], [2]]);
  await ok(
    local,
    `CREATE EXTERNAL STREAM r2 (n int) SETTINGS type='timeplus', url='${remoteBase()}', stream='src2', user='admin', password='${ADMIN_PASSWORD}'`,
  );
  await eventually(local, 'SELECT count(), sum(n) FROM table(r2)', [[2, 3]], 'before');
  await local.h.stop();
  await remote.ingest('src2', ['n'], [[3], [4]]);
  local = await StreamingApi.attach(await local.h.restart());
  await eventually(local, 'SELECT count(), sum(n) FROM table(r2)', [[4, 10]], 'after the restart');
  // The reader resumed after the last remote sequence number it committed (1), not from the start.
  const running = await remote.get('/v1beta2/queries');
  const readers = (running as { sql: string; status: string }[]).filter(
    (q) => q.status === 'running' && q.sql.includes('`src2`'),
  );
  assert.equal(readers.length, 1, JSON.stringify(running));
  assert.match(readers[0]?.sql ?? '', /WHERE _tp_sn > 1$/);
  await remote.ingest('src2', ['n'], [[5]]);
  await eventually(local, 'SELECT count(), sum(n) FROM table(r2)', [[5, 15]], 'and following again');

  // A state file of an older version (a count of rows): read once from the earliest, skipping
  // that many, then by sequence number again.
  await local.h.stop();
  const state = join(local.h.dataDir, 'external-streams', 'default.r2.offsets.json');
  assert.deepEqual(JSON.parse(await readFile(state, 'utf8')), { sn: 4 });
  await writeFile(state, JSON.stringify({ rows: 5 }));
  await remote.ingest('src2', ['n'], [[6]]);
  local = await StreamingApi.attach(await local.h.restart());
  await eventually(local, 'SELECT count(), sum(n) FROM table(r2)', [[6, 21]], 'after an older state file');
  assert.deepEqual(JSON.parse(await readFile(state, 'utf8')), { sn: 5 });
});

test('bad settings of a timeplus external stream are named', async () => {
  const cases: [string, string, RegExp][] = [
    ['(a int)', "type='timeplus', stream='s'", /hosts/],
    ['(a int)', "type='timeplus', hosts='127.0.0.1:8000'", /stream/],
    ['(a int)', "type='timeplus', hosts='nohost', stream='s'", /hosts/],
    ['(a int)', "type='timeplus', hosts='127.0.0.1:1', url='http://x', stream='s'", /url/],
    ['', "type='timeplus', hosts='127.0.0.1:1', stream='s'", /columns/],
    ['(a int)', "type='timeplus', hosts='127.0.0.1:1', stream='s', topic='t'", /topic/],
    ['(a int)', "type='timeplus', hosts='127.0.0.1:1', stream='s', user='u', api_key='k'", /api_key/],
    [
      '(a int)',
      "type='timeplus', url='http://u:secret@127.0.0.1:1/default/api', stream='s'",
      /url.*user and password/,
    ],
  ];
  for (const [cols, settings, message] of cases) {
    const r = await local.h.call('POST', '/v1beta2/queries', {
      body: { sql: `CREATE EXTERNAL STREAM bad_tp ${cols} SETTINGS ${settings}` },
    });
    assertError(r, 400, 10812, message);
  }
});
