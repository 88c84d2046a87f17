import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';
import { readSse, type SseEvent } from '../helpers/sse.ts';
import { ingestRaw } from '../helpers/streams.ts';

/** ALTER STREAM (column commands) and RENAME STREAM through the SQL API, restarts included. */

let h: Harness;

before(async () => {
  h = await startHarness();
});

after(() => h.close());

interface ErrorBody {
  code: number;
  message: string;
}

async function sql(text: string): Promise<{ status: number; body: string }> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql: text } });
  return { status: r.statusCode, body: r.body };
}

async function ok(text: string): Promise<void> {
  const r = await sql(text);
  assert.equal(r.status, 204, `${text}: ${r.status} ${r.body}`);
}

async function fails(text: string, status: number, code: number, message?: RegExp): Promise<ErrorBody> {
  const r = await sql(text);
  assert.equal(r.status, status, `${text}: ${r.body}`);
  const body = JSON.parse(r.body) as ErrorBody;
  assert.equal(body.code, code, `${text}: ${r.body}`);
  if (message) assert.match(body.message, message, text);
  return body;
}

/** A historical SELECT through POST /exec: `{columns, data}`. */
async function select(text: string): Promise<{ columns: string[]; data: unknown[][] }> {
  const r = await h.call('POST', '/v1beta2/exec', { body: { sql: text, type: 'historical' } });
  assert.equal(r.statusCode, 200, `${text}: ${r.body}`);
  const body = r.json() as { columns: { name: string }[]; data: unknown[][] };
  return { columns: body.columns.map((c) => c.name), data: body.data };
}

async function data(text: string): Promise<unknown[][]> {
  return (await select(text)).data;
}

async function ingest(stream: string, columns: string[], rows: unknown[][], db?: string): Promise<void> {
  const r = await ingestRaw(h, stream, JSON.stringify({ columns, data: rows }), 'application/json', {
    ...(db ? { query: `db=${db}` } : {}),
  });
  assert.equal(r.statusCode, 200, r.body);
}

async function ingestFails(stream: string, body: unknown, code: number, message?: RegExp): Promise<void> {
  const r = await ingestRaw(h, stream, JSON.stringify(body), 'application/json');
  assert.equal(r.json<ErrorBody>().code, code, r.body);
  if (message) assert.match(r.json<ErrorBody>().message, message);
}

async function sns(stream: string): Promise<number[]> {
  return (await data(`SELECT to_string(_tp_sn) FROM table(${stream}) ORDER BY _tp_sn`)).map((r) =>
    Number(r[0]),
  );
}

let listening: { trb: unknown; base: string } | undefined;

/** The API on a real socket (streaming queries are read as server-sent events as they arrive). */
async function apiBase(): Promise<string> {
  if (listening?.trb !== h.trb) listening = { trb: h.trb, base: `${await h.trb.listen()}/default/api` };
  return listening.base;
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

async function createQuery(stream: string): Promise<string> {
  const r = await h.call('GET', `/v1beta2/streams/${stream}`);
  assert.equal(r.statusCode, 200, r.body);
  return (r.json() as { create_query: string }).create_query;
}

test('ADD COLUMN: old rows take the DEFAULT, new rows write it, FIRST/AFTER place it; survives a restart', async () => {
  await ok('CREATE STREAM add_s (a int32, b string)');
  await ingest('add_s', ['a', 'b'], [[1, 'x']]);
  await ok("ALTER STREAM add_s ADD COLUMN c int64 DEFAULT a * 10 AFTER a, ADD COLUMN d string DEFAULT 'dd'");
  await ok('ALTER STREAM add_s ADD COLUMN IF NOT EXISTS z bool FIRST');
  assert.deepEqual((await select('SELECT * FROM table(add_s) LIMIT 0')).columns, [
    'z',
    'a',
    'c',
    'b',
    '_tp_time',
    'd',
  ]);
  await ingest(
    'add_s',
    ['a', 'b', 'c', 'z'],
    [
      [2, 'y', 5, true],
      [3, 'z', null, false],
    ],
  );
  const expected = [
    [false, 1, 10, 'x', 'dd'],
    [true, 2, 5, 'y', 'dd'],
    [false, 3, 30, 'z', 'dd'],
  ];
  assert.deepEqual(await data('SELECT z, a, c, b, d FROM table(add_s) ORDER BY _tp_sn'), expected);
  assert.match(await createQuery('add_s'), /`?c`? int64 DEFAULT a \* 10/);
  h = await h.restart();
  assert.deepEqual(await data('SELECT z, a, c, b, d FROM table(add_s) ORDER BY _tp_sn'), expected);
  await ingest('add_s', ['a', 'd'], [[4, 'new']]);
  assert.deepEqual(await data('SELECT a, c, d FROM table(add_s) WHERE a = 4'), [[4, 40, 'new']]);
  assert.deepEqual(await sns('add_s'), upTo(4));
});

test('DROP COLUMN: the column is gone from reads, ingest and create_query; survives a restart', async () => {
  await ok('CREATE STREAM drop_s (a int32, b string, c float64)');
  await ingest('drop_s', ['a', 'b', 'c'], [[1, 'x', 1.5]]);
  await ok('ALTER STREAM drop_s DROP COLUMN b');
  await ok('ALTER STREAM drop_s DROP COLUMN IF EXISTS b');
  assert.deepEqual((await select('SELECT * FROM table(drop_s)')).columns, ['a', 'c', '_tp_time']);
  await ingestFails('drop_s', { columns: ['a', 'b'], data: [[2, 'y']] }, 10302);
  await ingest('drop_s', ['a', 'c'], [[2, 2.5]]);
  assert.doesNotMatch(await createQuery('drop_s'), /\bb string/);
  h = await h.restart();
  assert.deepEqual(await data('SELECT a, c FROM table(drop_s) ORDER BY _tp_sn'), [
    [1, 1.5],
    [2, 2.5],
  ]);
  await ingest('drop_s', ['a'], [[3]]);
  assert.deepEqual(await sns('drop_s'), upTo(3));
});

test('MODIFY COLUMN converts stored rows and validates ingest with the new type; a failing conversion changes nothing', async () => {
  await ok('CREATE STREAM mod_s (a int32, s string)');
  await ingest('mod_s', ['a', 's'], [[1, '10']]);
  await ok("ALTER STREAM mod_s MODIFY COLUMN s int64 DEFAULT 7 COMMENT 'now a number'");
  await ok('ALTER STREAM mod_s MODIFY COLUMN a string');
  assert.deepEqual(
    (await h.call('GET', '/v1beta2/streams/mod_s')).json<{ columns: unknown[] }>().columns.slice(0, 2),
    [
      { name: 'a', type: 'string', nullable: false, default: '', codec: '', comment: '' },
      { name: 's', type: 'int64', nullable: false, default: '7', codec: '', comment: 'now a number' },
    ],
  );
  await ingestFails('mod_s', { columns: ['a', 's'], data: [['b', 'not a number']] }, 10303, /s/);
  await ingest('mod_s', ['a'], [['two']]);
  assert.deepEqual(await data('SELECT a, s FROM table(mod_s) ORDER BY _tp_sn'), [
    ['1', 10],
    ['two', 7],
  ]);
  // 'two' does not convert to an integer: the engine's error, and the stream is as it was.
  await fails('ALTER STREAM mod_s MODIFY COLUMN a int64', 400, 6);
  assert.deepEqual(await data('SELECT a, s FROM table(mod_s) ORDER BY _tp_sn'), [
    ['1', 10],
    ['two', 7],
  ]);
  assert.match(await createQuery('mod_s'), /`?a`? string/);
  h = await h.restart();
  await ingest('mod_s', ['a', 's'], [['three', 3]]);
  assert.deepEqual(await data('SELECT a, s FROM table(mod_s) ORDER BY _tp_sn'), [
    ['1', 10],
    ['two', 7],
    ['three', 3],
  ]);
  assert.deepEqual(await sns('mod_s'), upTo(3));
});

test('RENAME COLUMN and COMMENT COLUMN; survives a restart', async () => {
  await ok('CREATE STREAM ren_s (a int32, b string)');
  await ingest('ren_s', ['a', 'b'], [[1, 'x']]);
  await ok('ALTER STREAM ren_s RENAME COLUMN b TO b2');
  await ok("ALTER STREAM ren_s COMMENT COLUMN a 'the key'");
  await ingestFails('ren_s', { columns: ['a', 'b'], data: [[2, 'y']] }, 10302, /b/);
  await ingest('ren_s', ['a', 'b2'], [[2, 'y']]);
  assert.deepEqual(await data('SELECT a, b2 FROM table(ren_s) ORDER BY _tp_sn'), [
    [1, 'x'],
    [2, 'y'],
  ]);
  assert.match(await createQuery('ren_s'), /`?a`? int32 COMMENT 'the key'/);
  h = await h.restart();
  assert.deepEqual(await data('SELECT a, b2 FROM table(ren_s) ORDER BY _tp_sn'), [
    [1, 'x'],
    [2, 'y'],
  ]);
  assert.match(await createQuery('ren_s'), /COMMENT 'the key'/);
  assert.deepEqual(await sns('ren_s'), upTo(2));
});

test('ALTER STREAM refuses reserved, key and unknown columns and duplicates, with the catalogued codes', async () => {
  await ok(
    "CREATE STREAM err_s (k string, p date, v int32, w int32 DEFAULT v + 1) PARTITION BY p ORDER BY (k, _tp_time) SETTINGS mode = 'append'",
  );
  await ok("CREATE STREAM err_kv (id int32, v string) PRIMARY KEY id SETTINGS mode = 'changelog_kv'");
  for (const c of ['_tp_time', '_tp_sn']) {
    await fails(`ALTER STREAM err_s DROP COLUMN ${c}`, 400, 44, /reserved/);
    await fails(`ALTER STREAM err_s RENAME COLUMN ${c} TO x`, 400, 44, /reserved/);
    await fails(`ALTER STREAM err_s MODIFY COLUMN ${c} int64`, 400, 44, /reserved/);
  }
  await fails('ALTER STREAM err_kv DROP COLUMN _tp_delta', 400, 44, /reserved/);
  await fails('ALTER STREAM err_s ADD COLUMN _tp_x int32', 400, 44, /reserved/);
  await fails('ALTER STREAM err_s DROP COLUMN k', 400, 44, /ORDER BY/);
  await fails('ALTER STREAM err_s DROP COLUMN p', 400, 44, /PARTITION BY/);
  await fails('ALTER STREAM err_kv DROP COLUMN id', 400, 44, /PRIMARY KEY/);
  await fails('ALTER STREAM err_kv RENAME COLUMN id TO id2', 400, 44, /PRIMARY KEY/);
  await fails('ALTER STREAM err_s DROP COLUMN v', 400, 44, /column w/);
  for (const cmd of [
    'DROP COLUMN nope',
    'MODIFY COLUMN nope int64',
    'RENAME COLUMN nope TO nope2',
    "COMMENT COLUMN nope 'x'",
    'ADD COLUMN x int32 AFTER nope',
  ])
    await fails(`ALTER STREAM err_s ${cmd}`, 400, 16, /nope/);
  await fails('ALTER STREAM err_s ADD COLUMN v int64', 400, 15, /v/);
  await fails('ALTER STREAM err_s RENAME COLUMN w TO v', 400, 15, /v/);
  await fails('ALTER STREAM no_such_stream ADD COLUMN x int32', 404, 60);
  // A refused command in a list applies none of them.
  await fails('ALTER STREAM err_s ADD COLUMN fine int32, DROP COLUMN nope', 400, 16);
  assert.doesNotMatch(await createQuery('err_s'), /fine/);
  // IF [NOT] EXISTS make them no-ops.
  await ok('ALTER STREAM err_s DROP COLUMN IF EXISTS nope');
  await ok('ALTER STREAM err_s MODIFY COLUMN IF EXISTS nope int64');
  await ok('ALTER STREAM err_s RENAME COLUMN IF EXISTS nope TO nope2');
  await ok('ALTER STREAM err_s ADD COLUMN IF NOT EXISTS v int64');
  assert.match(await createQuery('err_s'), /`?v`? int32/);
});

test('ingest concurrent with ALTER STREAM waits for it and loses nothing', async () => {
  await ok('CREATE STREAM busy_s (a int32)');
  const writes = Array.from({ length: 30 }, (_, i) => ingest('busy_s', ['a'], [[i]]));
  const alter = ok('ALTER STREAM busy_s ADD COLUMN b int32 DEFAULT a + 100');
  await Promise.all([...writes, alter]);
  await ingest('busy_s', ['a', 'b'], [[1000, 1]]);
  assert.deepEqual(await sns('busy_s'), upTo(31));
  assert.deepEqual(await data('SELECT count(), sum(b) FROM table(busy_s) WHERE a < 1000'), [
    [30, 30 * 100 + (29 * 30) / 2],
  ]);
});

test('a WAL record written before an ALTER replays after a restart with the new columns', async () => {
  await ok('CREATE STREAM wal_s (a int32, b string, c string, d int32)');
  await ingest('wal_s', ['a', 'b', 'c', 'd'], [[1, 'b1', 'c1', 10]]);
  const streams = h.trb.services.streams;
  // Durable in the WAL and acknowledged, but never inserted (as if the process died).
  streams.setTestHooks({ skipEngineInsert: (_db, name) => name === 'wal_s' });
  await ingest('wal_s', ['a', 'b', 'c', 'd'], [[2, 'b2', 'c2', 20]]);
  const r = await ingestRaw(h, 'wal_s', '{"a":3,"b":"b3","c":"c3"}\n', 'application/x-ndjson');
  assert.equal(r.statusCode, 200, r.body);
  streams.setTestHooks({});
  await ok(
    "ALTER STREAM wal_s DROP COLUMN b, RENAME COLUMN c TO c2, ADD COLUMN e string DEFAULT 'new', MODIFY COLUMN d int64 DEFAULT 5, MODIFY COLUMN a string",
  );
  await ok('ALTER STREAM wal_s ADD COLUMN b int64 DEFAULT 99'); // a new `b`: old values must not land in it
  await ingest('wal_s', ['a', 'c2', 'e'], [['4', 'c4', 'e4']]);
  assert.deepEqual(await sns('wal_s'), [0, 3]);
  h = await h.restart();
  const expected = [
    ['1', 'c1', 10, 'new', 99],
    ['2', 'c2', 20, 'new', 99],
    ['3', 'c3', 0, 'new', 99],
    ['4', 'c4', 5, 'e4', 99],
  ];
  assert.deepEqual(await data('SELECT a, c2, d, e, b FROM table(wal_s) ORDER BY _tp_sn'), expected);
  assert.deepEqual(await sns('wal_s'), upTo(4));
  h = await h.restart();
  assert.deepEqual(await data('SELECT a, c2, d, e, b FROM table(wal_s) ORDER BY _tp_sn'), expected);
});

test('a streaming-storage stream replays its whole WAL through the ALTERs at every start', async () => {
  await ok("CREATE STREAM q_s (a int32, b string, c int32) SETTINGS storage_type = 'streaming'");
  await ingest('q_s', ['a', 'b', 'c'], [[1, 'x', 10]]);
  const r = await ingestRaw(h, 'q_s', '{"a":2,"b":"y","c":20}\n', 'application/x-ndjson');
  assert.equal(r.statusCode, 200, r.body);
  await ok("ALTER STREAM q_s DROP COLUMN b, RENAME COLUMN c TO c2, ADD COLUMN d string DEFAULT 'dd' FIRST");
  await ingest('q_s', ['a', 'c2', 'd'], [[3, 30, 'x3']]);
  const expected = [
    ['dd', 1, 10],
    ['dd', 2, 20],
    ['x3', 3, 30],
  ];
  assert.deepEqual(await data('SELECT d, a, c2 FROM table(q_s) ORDER BY _tp_sn'), expected);
  for (let i = 0; i < 2; i++) {
    h = await h.restart();
    assert.deepEqual(await data('SELECT d, a, c2 FROM table(q_s) ORDER BY _tp_sn'), expected);
    assert.deepEqual(await sns('q_s'), upTo(3));
  }
});

test('a memory-storage stream keeps its rows through ALTER STREAM', async () => {
  await ok("CREATE STREAM m_s (a int32, b string) SETTINGS storage_type = 'memory'");
  await ingest('m_s', ['a', 'b'], [[1, 'x']]);
  await ok('ALTER STREAM m_s RENAME COLUMN b TO b2, ADD COLUMN c int32 DEFAULT a + 1, MODIFY COLUMN a int64');
  await fails('ALTER STREAM m_s MODIFY COLUMN b2 int32', 400, 6);
  await ingest('m_s', ['a', 'b2'], [[2, 'y']]);
  assert.deepEqual(await data('SELECT a, b2, c FROM table(m_s) ORDER BY _tp_sn'), [
    [1, 'x', 2],
    [2, 'y', 3],
  ]);
  assert.deepEqual(await sns('m_s'), upTo(2));
});

test('RENAME STREAM moves rows, sequence numbers, WAL and definition; the old name is gone', async () => {
  await ok('CREATE STREAM old_n (a int32)');
  await ingest('old_n', ['a'], [[1], [2]]);
  await ok('RENAME STREAM old_n TO new_n');
  assert.equal((await h.call('GET', '/v1beta2/streams/old_n')).statusCode, 404);
  const gone = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT * FROM table(old_n)', type: 'historical' },
  });
  assert.equal(gone.json<ErrorBody>().code, 60, gone.body);
  await ingestFails('old_n', { columns: ['a'], data: [[9]] }, 60);
  await ingest('new_n', ['a'], [[3]]);
  assert.match(await createQuery('new_n'), /CREATE STREAM default\.new_n/);
  assert.deepEqual(await data('SELECT a FROM table(new_n) ORDER BY _tp_sn'), [[1], [2], [3]]);
  const walRoot = join(h.dataDir, 'streams', 'default');
  assert.ok((await stat(join(walRoot, 'new_n'))).isDirectory());
  await assert.rejects(stat(join(walRoot, 'old_n')));
  h = await h.restart();
  assert.equal((await h.call('GET', '/v1beta2/streams/old_n')).statusCode, 404);
  await ingest('new_n', ['a'], [[4]]);
  assert.deepEqual(await data('SELECT a FROM table(new_n) ORDER BY _tp_sn'), [[1], [2], [3], [4]]);
  assert.deepEqual(await sns('new_n'), upTo(4));
});

test('RENAME STREAM replays a WAL record the engine never got, under the new name', async () => {
  await ok('CREATE STREAM crash_n (a int32)');
  await ingest('crash_n', ['a'], [[1]]);
  const streams = h.trb.services.streams;
  streams.setTestHooks({ skipEngineInsert: (_db, name) => name === 'crash_n' });
  await ingest('crash_n', ['a'], [[2]]);
  streams.setTestHooks({});
  await ok('RENAME STREAM crash_n TO crash_n2');
  h = await h.restart();
  assert.deepEqual(await data('SELECT a, to_string(_tp_sn) FROM table(crash_n2) ORDER BY _tp_sn'), [
    [1, '0'],
    [2, '1'],
  ]);
});

test('RENAME STREAM into another database', async () => {
  await ok('CREATE DATABASE other_db');
  await ok('CREATE STREAM moving (a int32)');
  await ingest('moving', ['a'], [[1]]);
  await ok('RENAME STREAM default.moving TO other_db.moved');
  await ingest('moved', ['a'], [[2]], 'other_db');
  assert.deepEqual(await data('SELECT a FROM table(other_db.moved) ORDER BY _tp_sn'), [[1], [2]]);
  h = await h.restart();
  assert.deepEqual(await data('SELECT a, to_string(_tp_sn) FROM table(other_db.moved) ORDER BY _tp_sn'), [
    [1, '0'],
    [2, '1'],
  ]);
});

test('RENAME STREAM refusals: taken name (57), missing stream (60), dependent view or input (630)', async () => {
  await ok('CREATE STREAM r1 (a int32)');
  await ok('CREATE STREAM r2 (_raw string, _index string, _id string)');
  await fails('RENAME STREAM r1 TO r2', 409, 57);
  await fails('RENAME STREAM r1 TO r1', 409, 57);
  await fails('RENAME STREAM nope TO r3', 404, 60);
  await ok('RENAME STREAM IF EXISTS nope TO r3');
  await fails('RENAME STREAM r1 TO missing_db.r1', 404, 81);
  await ok('CREATE VIEW r1_view AS SELECT a FROM r1');
  await fails('RENAME STREAM r1 TO r9', 409, 630, /r1_view/);
  await fails('RENAME STREAM r2 TO r1_view', 409, 57);
  const port = await freePort();
  await ok(
    `CREATE INPUT r2_in SETTINGS type='elastic', target_stream='r2', tcp_port=${port}, listen_host='127.0.0.1'`,
  );
  await fails('RENAME STREAM r2 TO r9', 409, 630, /input r2_in/);
  await ok('DROP INPUT r2_in');
  await ok('RENAME STREAM r2 TO r9');
  assert.equal((await h.call('GET', '/v1beta2/streams/r9')).statusCode, 200);
});

test('a streaming query over a column that is dropped fails with a clear error', async () => {
  await ok('CREATE STREAM live_s (a int32, b int32)');
  const base = await apiBase();
  const r = await fetch(`${base}/v1beta2/queries`, {
    method: 'POST',
    headers: { ...authHeader(ADMIN), 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ sql: 'SELECT a, b FROM live_s' }),
  });
  assert.equal(r.status, 200);
  const events = readSse(r.body as ReadableStream<Uint8Array>);
  const first = (await events.next()).value as SseEvent;
  assert.equal(JSON.parse(first.data).status, 'running');
  await ingest('live_s', ['a', 'b'], [[1, 2]]);
  const seen: SseEvent[] = [];
  for (;;) {
    const e = (await events.next()).value as SseEvent;
    seen.push(e);
    if (e.event === 'message') break; // the row written before the ALTER reached the query
  }
  await ok('ALTER STREAM live_s DROP COLUMN b');
  await ingest('live_s', ['a'], [[3]]);
  for await (const e of events) seen.push(e);
  const last = JSON.parse((seen.at(-1) as SseEvent).data) as { status: string; message?: string };
  assert.equal(last.status, 'failed', JSON.stringify(seen));
  assert.match(String(last.message), /Unknown expression identifier `b`/);
  assert.deepEqual(
    seen.filter((e) => e.event === 'message').flatMap((e) => JSON.parse(e.data) as unknown[][]),
    [[1, 2]],
  );
});

test('a streaming query over a renamed stream fails with the unknown-table error', async () => {
  await ok('CREATE STREAM live_r (a int32)');
  const base = await apiBase();
  const r = await fetch(`${base}/v1beta2/queries`, {
    method: 'POST',
    headers: { ...authHeader(ADMIN), 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ sql: 'SELECT a FROM live_r' }),
  });
  const events = readSse(r.body as ReadableStream<Uint8Array>);
  await events.next();
  await ok('RENAME STREAM live_r TO live_r2');
  await ingest('live_r2', ['a'], [[1]]);
  const seen: SseEvent[] = [];
  for await (const e of events) seen.push(e);
  const last = JSON.parse((seen.at(-1) as SseEvent).data) as { status: string; message?: string };
  assert.equal(last.status, 'failed', JSON.stringify(seen));
  assert.match(String(last.message), /live_r/);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}
