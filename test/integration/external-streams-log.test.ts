/**
 * `CREATE EXTERNAL STREAM ... SETTINGS type='log'` over real files being appended to in the user
 * files directory: table() reads every existing line, a streaming SELECT follows new lines (from
 * latest by default, seek_to='earliest' from the first) and new matching files; partial lines wait
 * for their newline; timestamp_regex gives _tp_time; row_delimiter joins multi-line records; a
 * restart neither loses nor repeats lines; directories outside the user files directory are refused;
 * preview (operation 21) reads earliest and latest events; DROP removes the stream.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';
import { assertError } from '../helpers/streams.ts';

let api: StreamingApi;
let userFiles = '';

before(async () => {
  api = await StreamingApi.open();
  userFiles = join(api.h.dataDir, 'user_files');
});

after(async () => {
  await api.close();
});

const h = () => api.h;

async function ddl(sql: string) {
  return h().call('POST', '/v1beta2/queries', { body: { sql } });
}

async function ok(sql: string): Promise<void> {
  const r = await ddl(sql);
  assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
}

async function historical(sql: string): Promise<unknown[][]> {
  const r = await h().call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  return (r.json() as { data: unknown[][] }).data;
}

/** Poll `sql` until it answers `expected` (the follower polls the files); fails with the last answer. */
async function eventually(sql: string, expected: unknown[][], what: string): Promise<void> {
  let last: unknown[][] = [];
  for (let i = 0; i < 300; i++) {
    last = await historical(sql);
    if (JSON.stringify(last) === JSON.stringify(expected)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(last, expected, what);
}

function logDir(name: string): string {
  const dir = join(userFiles, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

test('table() reads every existing line; a streaming SELECT follows appended lines and new files', async () => {
  const dir = logDir('app');
  writeFileSync(join(dir, 'app.log'), 'one\ntwo\r\nthree\n');
  writeFileSync(join(dir, 'other.txt'), 'not matched\n');
  await ok(
    "CREATE EXTERNAL STREAM app_log (raw string) SETTINGS type='log', log_dir='app', log_files='app.*\\\\.log', poll_interval_ms=20",
  );
  await eventually(
    'SELECT raw FROM table(app_log) ORDER BY raw',
    [['one'], ['three'], ['two']],
    'every existing line',
  );

  const tail = await api.start('SELECT raw FROM app_log');
  const seek = await api.start("SELECT raw FROM app_log SETTINGS seek_to='earliest'");
  // A partial line is not a row until its newline arrives.
  appendFileSync(join(dir, 'app.log'), 'four\nfi');
  await tail.waitForRows(1);
  appendFileSync(join(dir, 'app.log'), 've\n');
  writeFileSync(join(dir, 'app-2.log'), 'six\n');
  const rows = await tail.waitForRows(3);
  assert.deepEqual(rows.map((r) => r[0]).sort(), ['five', 'four', 'six']);
  const all = await seek.waitForRows(6);
  assert.deepEqual(all.map((r) => r[0]).sort(), ['five', 'four', 'one', 'six', 'three', 'two']);
  await tail.cancel();
  await seek.cancel();

  // The stream is a source like any other: SQL on top.
  await eventually(
    "SELECT count(), count_if(raw LIKE 'f%') FROM table(app_log)",
    [[6, 2]],
    'aggregates over the lines',
  );

  // GET shows it with its columns and settings; SHOW CREATE gives its statement.
  const got = await h().call('GET', '/v1beta2/external_streams/app_log');
  assert.equal(got.statusCode, 200, got.body);
  const body = got.json() as { type: string; columns: { name: string }[]; create_query: string };
  assert.equal(body.type, 'log');
  assert.deepEqual(
    body.columns.map((c) => c.name),
    ['raw'],
  );
  assert.match(body.create_query, /type = 'log'/);

  const stats = await h().call('GET', '/v1beta2/external_streams/app_log/stats');
  assert.equal(stats.statusCode, 200, stats.body);
  const st = stats.json() as { read_eps: number; read_bps: number; written_eps: number };
  assert.equal(Math.round(st.read_eps * 1800), 6, 'six rows read in the 30-minute window');
  assert.ok(st.read_bps > 0);
  assert.equal(st.written_eps, 0);

  // A materialized view reads it as any stream; the topology shows one node for it, linked.
  await ok("CREATE MATERIALIZED VIEW app_f AS SELECT raw FROM app_log WHERE raw LIKE 'fi%'");
  appendFileSync(join(dir, 'app.log'), 'fifteen\n');
  await eventually(
    "SELECT count() FROM table(app_f) WHERE raw = 'fifteen'",
    [[1]],
    'the view got the new line',
  );
  const topo = (await h().call('GET', '/v1beta2/topology')).json() as {
    nodes: { id: string; name: string; type: string }[];
    edges: { source: string; target: string }[];
  };
  assert.deepEqual(
    topo.nodes.filter((n) => n.name === 'app_log').map((n) => n.id),
    ['external_stream:default.app_log'],
  );
  assert.ok(
    topo.edges.some(
      (e) => e.source === 'external_stream:default.app_log' && e.target === 'materialized_view:default.app_f',
    ),
    JSON.stringify(topo.edges),
  );

  // Not dropped under the view reading it.
  const under = await ddl('DROP STREAM app_log');
  assertError(under, 409, 630, /app_f/);

  // Written into: refused, it is read from files.
  const ins = await ddl("INSERT INTO app_log (raw) VALUES ('x')");
  assertError(ins, 400, 48, /cannot be written/);
});

test('timestamp_regex sets _tp_time; row_delimiter makes multi-line records', async () => {
  const dir = logDir('server');
  writeFileSync(
    join(dir, 'server.log'),
    [
      '2024.01.02 10:11:12.250 [ 1 ] {} <Info> started',
      '2024.01.02 10:11:13.500 [ 2 ] {} <Error> failed:',
      '  at frame 1',
      '  at frame 2',
      '2024.01.02 10:11:14.000 [ 1 ] {} <Info> next',
      '',
    ].join('\n'),
  );
  await ok(
    String.raw`CREATE EXTERNAL STREAM server_log (raw string) SETTINGS type='log', log_dir='server', log_files='server.log', timestamp_regex='^(\\d{4}\\.\\d{2}\\.\\d{2} \\d{2}:\\d{2}:\\d{2}\\.\\d+)', row_delimiter='(\\d{4}\\.\\d{2}\\.\\d{2} \\d{2}:\\d{2}:\\d{2}\\.\\d+) \\[ \\d+ \\] \\{', poll_interval_ms=20`,
  );
  // The last record waits for the next one to start (it may still be written to).
  await eventually(
    "SELECT format_datetime(_tp_time, '%H:%i:%S', 'UTC'), to_millisecond(_tp_time), raw FROM table(server_log) ORDER BY _tp_time",
    [
      ['10:11:12', 250, '2024.01.02 10:11:12.250 [ 1 ] {} <Info> started'],
      ['10:11:13', 500, '2024.01.02 10:11:13.500 [ 2 ] {} <Error> failed:\n  at frame 1\n  at frame 2'],
    ],
    'records with their times',
  );
  appendFileSync(join(dir, 'server.log'), '2024.01.02 10:11:15.000 [ 1 ] {} <Info> last\n');
  await eventually('SELECT count() FROM table(server_log)', [[3]], 'the next record closes the previous one');
});

test('a restart neither loses nor repeats lines', async () => {
  const dir = logDir('restart');
  writeFileSync(join(dir, 'r.log'), 'a\nb\n');
  await ok("CREATE EXTERNAL STREAM restart_log SETTINGS type='log', log_dir='restart', log_files='r.log'");
  await eventually('SELECT count() FROM table(restart_log)', [[2]], 'before the restart');
  const dataDir = h().dataDir;
  await h().stop();
  appendFileSync(join(dir, 'r.log'), 'c\nd\n');
  api = await StreamingApi.attach(await h().restart());
  assert.equal(h().dataDir, dataDir);
  await eventually(
    'SELECT raw FROM table(restart_log) ORDER BY raw',
    [['a'], ['b'], ['c'], ['d']],
    'lines appended while down are read once',
  );
  // The other streams are followed again too.
  appendFileSync(join(logDir('app'), 'app.log'), 'seven\n');
  await eventually('SELECT count() FROM table(app_log)', [[8]], 'app_log follows after the restart');
});

test('a directory outside the user files directory is refused; so are bad settings', async () => {
  const outside = mkdtempSync(join(tmpdir(), 'trb-outside-'));
  writeFileSync(join(outside, 'secret.log'), 'secret\n');
  symlinkSync(outside, join(userFiles, 'link-out'));
  for (const dir of ['../', outside, 'link-out']) {
    const r = await ddl(
      `CREATE EXTERNAL STREAM bad_dir SETTINGS type='log', log_dir='${dir}', log_files='.*'`,
    );
    assertError(r, 403, 10815);
  }
  // A file linked out of a confined directory is not read.
  const dir = logDir('links');
  writeFileSync(join(dir, 'ok.log'), 'mine\n');
  symlinkSync(join(outside, 'secret.log'), join(dir, 'secret.log'));
  await ok(
    "CREATE EXTERNAL STREAM links_log SETTINGS type='log', log_dir='links', log_files='.*\\\\.log', poll_interval_ms=20",
  );
  await eventually('SELECT raw FROM table(links_log)', [['mine']], 'only the file inside');

  const cases: [string, RegExp][] = [
    ["type='log', log_files='x'", /log_dir/],
    ["type='log', log_dir='app'", /log_files/],
    ["type='log', log_dir='missing-dir', log_files='x'", /log_dir/],
    ["type='log', log_dir='app', log_files='('", /log_files.*regular expression/],
    ["type='log', log_dir='app', log_files='x', brokers='k'", /brokers/],
    ["type='log', log_dir='app', log_files='x', poll_interval_ms=0", /poll_interval_ms/],
  ];
  for (const [settings, message] of cases) {
    const r = await ddl(`CREATE EXTERNAL STREAM bad_log SETTINGS ${settings}`);
    assertError(r, 400, 10812);
    assert.match((r.json() as { message: string }).message, message);
  }
  const cols = await ddl(
    "CREATE EXTERNAL STREAM bad_log (a int) SETTINGS type='log', log_dir='app', log_files='x'",
  );
  assertError(cols, 400, 10812);
  const exists = await h().call('GET', '/v1beta2/streams/bad_log');
  assert.equal(exists.statusCode, 404, 'nothing was created');
});

test('preview reads earliest and latest events without creating a stream', async () => {
  const dir = logDir('preview');
  writeFileSync(join(dir, 'p.log'), '2024-05-06T07:08:09Z first\nsecond\nthird\n');
  const settings = [
    { key: 'type', value: 'log' },
    { key: 'log_dir', value: 'preview' },
    { key: 'log_files', value: 'p\\.log' },
    { key: 'timestamp_regex', value: '^(\\S+Z) ' },
  ];
  const earliest = await h().call('POST', '/v1beta2/external_streams/preview', {
    body: { settings, count: 2, offset: 'earliest', timeout: 5 },
  });
  assert.equal(earliest.statusCode, 200, earliest.body);
  assert.deepEqual(earliest.json(), [
    { raw: '2024-05-06T07:08:09Z first', _tp_time: '2024-05-06T07:08:09.000Z' },
    { raw: 'second' },
  ]);

  // latest: what is appended after the preview starts (appended until it answers).
  const pending = h().call('POST', '/v1beta2/external_streams/preview', {
    body: { settings, count: 1, offset: 'latest', timeout: 60 },
  });
  let done = false;
  const appender = (async () => {
    while (!done) {
      appendFileSync(join(dir, 'p.log'), 'new line\n');
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const latest = await pending;
  done = true;
  await appender;
  assert.equal(latest.statusCode, 200, latest.body);
  assert.deepEqual(latest.json(), [{ raw: 'new line' }]);

  const streams = await h().call('GET', '/v1beta2/external_streams');
  assert.ok(!JSON.stringify(streams.json()).includes('preview'));

  const denied = await h().call('POST', '/v1beta2/external_streams/preview', {
    body: { settings: [...settings.slice(0, 1), { key: 'log_dir', value: '/etc' }, settings[2]], count: 1 },
  });
  assertError(denied, 403, 10815);
  const http = await h().call('POST', '/v1beta2/external_streams/preview', {
    body: {
      settings: [
        { key: 'type', value: 'http' },
        { key: 'url', value: 'http://127.0.0.1:1/x' },
      ],
    },
  });
  assertError(http, 400, 10813);
});

test('DROP EXTERNAL STREAM stops following and removes its rows', async () => {
  const dir = logDir('drop');
  writeFileSync(join(dir, 'd.log'), 'x\n');
  await ok(
    "CREATE EXTERNAL STREAM drop_log SETTINGS type='log', log_dir='drop', log_files='d.log', poll_interval_ms=20",
  );
  await eventually('SELECT count() FROM table(drop_log)', [[1]], 'read');
  await ok('DROP STREAM drop_log');
  const r = await ddl('SELECT * FROM table(drop_log)');
  assert.ok(r.statusCode >= 400, r.body);
  const gone = await h().call('GET', '/v1beta2/external_streams/drop_log');
  assert.equal(gone.statusCode, 404);
  // Created again, it reads the file from its start again.
  appendFileSync(join(dir, 'd.log'), 'y\n');
  await ok(
    "CREATE EXTERNAL STREAM drop_log SETTINGS type='log', log_dir='drop', log_files='d.log', poll_interval_ms=20",
  );
  await eventually('SELECT raw FROM table(drop_log) ORDER BY raw', [['x'], ['y']], 'read again');
  // DELETE of the stream of the same name drops the external stream with it.
  const del = await h().call('DELETE', '/v1beta2/streams/drop_log');
  assert.equal(del.statusCode, 204, del.body);
  const after = await h().call('GET', '/v1beta2/external_streams/drop_log');
  assert.equal(after.statusCode, 404);
});

test('the stream holding a log external stream rows is not listed or found among streams', async () => {
  const dir = logDir('hidden');
  writeFileSync(join(dir, 'h.log'), 'a\nb\n');
  await ok(
    "CREATE EXTERNAL STREAM hidden_log (raw string) SETTINGS type='log', log_dir='hidden', log_files='h\\\\.log', poll_interval_ms=20",
  );
  await ok('CREATE STREAM plain_s (raw string)');
  // Its data path is the same: table() and streaming reads see the lines.
  await eventually('SELECT count() FROM table(hidden_log)', [[2]], 'the lines are read');

  const listed = h().call('GET', '/v1beta2/streams');
  const names = ((await listed).json() as { name: string }[]).map((x) => x.name);
  assert.ok(names.includes('plain_s'), names.join(','));
  assert.ok(!names.includes('hidden_log'), names.join(','));
  const expanded = (await h().call('GET', '/v1beta2/streams?expand=true')).json() as { name: string }[];
  assert.ok(!expanded.some((x) => x.name === 'hidden_log'));
  for (const [method, path, body] of [
    ['GET', '/v1beta2/streams/hidden_log', undefined],
    ['GET', '/v1beta2/streams/hidden_log/stats', undefined],
    ['PATCH', '/v1beta2/streams/hidden_log', { description: 'x' }],
  ] as const) {
    const r = await h().call(method, path, body ? { body } : {});
    assertError(r, 404, 60);
  }
  // It is an external stream.
  const ext = await h().call('GET', '/v1beta2/external_streams/hidden_log');
  assert.equal(ext.statusCode, 200, ext.body);
  assert.equal((ext.json() as { name: string }).name, 'hidden_log');
  const all = (await h().call('GET', '/v1beta2/external_streams')).json() as { name: string }[];
  assert.ok(all.some((x) => x.name === 'hidden_log'));
  // DELETE /streams/<name> still drops the external stream with its rows (as before).
  const del = await h().call('DELETE', '/v1beta2/streams/hidden_log');
  assert.equal(del.statusCode, 204);
  assert.equal((await h().call('GET', '/v1beta2/external_streams/hidden_log')).statusCode, 404);
});
