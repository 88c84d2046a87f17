import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { count, createStream, ingestCompact, ingestRaw, rows } from '../helpers/streams.ts';

let h: Harness;

before(async () => {
  h = await startHarness();
  await createStream(h, {
    name: 'events',
    columns: [
      { name: 'id', type: 'int64' },
      { name: 'name', type: 'string' },
    ],
  });
  await createStream(h, { name: 'logs', columns: [{ name: 'raw', type: 'string' }] });
});

after(() => h.close());

/** Rows of a stream ordered by sequence number, `_tp_sn` last. */
function snapshot(stream: string, cols = 'toString(id), name'): Promise<unknown[][]> {
  return rows(h, `SELECT ${cols}, toString(_tp_sn) FROM default.${stream} ORDER BY _tp_sn`);
}

test('compact: {columns, data} with the default Content-Type; 200 with an empty body', async () => {
  const before = await count(h, 'events');
  await ingestCompact(
    h,
    'events',
    ['id', 'name'],
    [
      [1, 'a'],
      [2, 'b'],
    ],
  );
  const r = await ingestRaw(h, 'events', JSON.stringify({ columns: ['name', 'id'], data: [['c', 3]] }));
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.body, '');
  const all = await snapshot('events');
  assert.deepEqual(all.slice(before), [
    ['1', 'a', '0'],
    ['2', 'b', '1'],
    ['3', 'c', '2'],
  ]);
});

test('every Content-Type spelling of the contract lands its rows', async () => {
  const compact = JSON.stringify({ columns: ['id', 'name'], data: [[10, 'ct']] });
  const ndjson = '{"id":10,"name":"ct"}\n{"id":11,"name":"ct"}';
  const cases: Array<[string, string, number]> = [
    ['application/json', compact, 1],
    ['application/json;format=compact', compact, 1],
    ['application/json;format=compat', compact, 1],
    ['application/json; charset=utf-8', compact, 1],
    ['application/vnd.timeplus+json', compact, 1],
    ['application/vnd.timeplus+json;format=compat', compact, 1],
    ['application/vnd.timeplus+json;format=compact', compact, 1],
    ['application/json;format=streaming', ndjson, 2],
    ['application/json;format=stream', ndjson, 2],
    ['application/vnd.timeplus+json;format=streaming', ndjson, 2],
    ['application/vnd.timeplus+json;format=stream', ndjson, 2],
    ['application/x-ndjson', ndjson, 2],
    ['application/x-ndjson; charset=utf-8', ndjson, 2],
  ];
  for (const [ct, body, n] of cases) {
    const before = await count(h, 'events');
    const r = await ingestRaw(h, 'events', body, ct);
    assert.equal(r.statusCode, 200, `${ct}: ${r.body}`);
    assert.equal(await count(h, 'events'), before + n, ct);
  }
  const textCases: Array<[string, string, number]> = [
    ['text/plain', 'one\ntwo', 1],
    ['text/plain;format=raw', 'one\ntwo', 1],
    ['text/plain; charset=utf-8', 'x', 1],
    ['text/plain;format=lines', 'one\ntwo\n', 2],
  ];
  for (const [ct, body, n] of textCases) {
    const before = await count(h, 'logs');
    const r = await ingestRaw(h, 'logs', body, ct);
    assert.equal(r.statusCode, 200, `${ct}: ${r.body}`);
    assert.equal(await count(h, 'logs'), before + n, ct);
  }
});

test('?format= overrides the Content-Type (tools that can only send application/json)', async () => {
  const before = await count(h, 'events');
  let r = await ingestRaw(h, 'events', '{"id":20,"name":"q"}{"id":21,"name":"q"}', 'application/json', {
    query: 'format=streaming',
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(await count(h, 'events'), before + 2);
  const logs = await count(h, 'logs');
  r = await ingestRaw(h, 'logs', 'a\nb\nc', 'application/json', { query: 'format=lines' });
  assert.equal(r.statusCode, 200, r.body);
  r = await ingestRaw(h, 'logs', '{"not":"json-parsed"}', 'application/json', { query: 'format=raw' });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(await count(h, 'logs'), logs + 4);
  const [[last]] = (await rows(h, 'SELECT raw FROM default.logs ORDER BY _tp_sn DESC LIMIT 1')) as [[string]];
  assert.equal(last, '{"not":"json-parsed"}');
});

test('streaming: NDJSON, concatenated objects without newlines, blank lines and CRLF', async () => {
  const before = await count(h, 'events');
  const body = '{"id":30,"name":"n1"}{"id":31,"name":"n2"}\r\n\r\n\n{"id":32}\n\n{"name":"n4","id":33}\n\n';
  const r = await ingestRaw(h, 'events', body, 'application/x-ndjson');
  assert.equal(r.statusCode, 200, r.body);
  const got = (await snapshot('events')).slice(before).map((x) => [x[0], x[1]]);
  assert.deepEqual(got, [
    ['30', 'n1'],
    ['31', 'n2'],
    ['32', ''],
    ['33', 'n4'],
  ]);
});

test('raw keeps the whole body in one row; lines makes one row per non-empty line', async () => {
  const before = await count(h, 'logs');
  let r = await ingestRaw(h, 'logs', 'first line\n\tsecond "quoted" \\ line\n', 'text/plain');
  assert.equal(r.statusCode, 200, r.body);
  r = await ingestRaw(h, 'logs', 'l1\r\nl2\n\nl3 ünïcödé', 'text/plain;format=lines');
  assert.equal(r.statusCode, 200, r.body);
  const got = (await rows(h, 'SELECT raw FROM default.logs ORDER BY _tp_sn')).slice(before).map((x) => x[0]);
  assert.deepEqual(got, ['first line\n\tsecond "quoted" \\ line\n', 'l1', 'l2', 'l3 ünïcödé']);
});

test('a charset parameter decodes the body', async () => {
  const before = await count(h, 'logs');
  const r = await ingestRaw(
    h,
    'logs',
    Buffer.from('caf\xe9\nna\xefve', 'latin1'),
    'text/plain; format=lines; charset=ISO-8859-1',
  );
  assert.equal(r.statusCode, 200, r.body);
  const got = (await rows(h, 'SELECT raw FROM default.logs ORDER BY _tp_sn')).slice(before).map((x) => x[0]);
  assert.deepEqual(got, ['café', 'naïve']);
});

test('ingest into a stream of another database with ?db=', async () => {
  await h.trb.services.engine.query('CREATE DATABASE IF NOT EXISTS other');
  await createStream(h, { name: 'events', columns: [{ name: 'id', type: 'int32' }] }, 'other');
  await ingestCompact(h, 'events', ['id'], [[1], [2]], 'other');
  assert.equal(await count(h, 'events', 'other'), 2);
  const r = await ingestRaw(h, 'events', '{"columns":["id"],"data":[[1]]}', 'application/json', {
    query: 'db=nowhere',
  });
  assert.equal(r.statusCode, 404, r.body);
});

test('values of every type family are stored exactly', async () => {
  await createStream(h, {
    name: 'typed',
    columns: [
      { name: 'i8', type: 'int8' },
      { name: 'i64', type: 'int64' },
      { name: 'u64', type: 'uint64' },
      { name: 'i128', type: 'int128' },
      { name: 'f', type: 'float64' },
      { name: 'd', type: 'decimal(10, 2)' },
      { name: 'b', type: 'bool' },
      { name: 's', type: 'string' },
      { name: 'fs', type: 'fixed_string(3)' },
      { name: 'dt', type: "datetime('UTC')" },
      { name: 'dt64', type: "datetime64(3, 'UTC')" },
      { name: 'dd', type: 'date' },
      { name: 'u', type: 'uuid' },
      { name: 'ip4', type: 'ipv4' },
      { name: 'ip6', type: 'ipv6' },
      { name: 'e', type: "enum8('a' = 1, 'b' = 2)" },
      { name: 'arr', type: 'array(int32)' },
      { name: 'm', type: 'map(string, int32)' },
      { name: 't', type: 'tuple(x int32, y string)' },
      { name: 'n', type: 'nullable(int32)' },
      { name: 'lc', type: 'low_cardinality(string)' },
    ],
  });
  const cols = [
    'i8',
    'i64',
    'u64',
    'i128',
    'f',
    'd',
    'b',
    's',
    'fs',
    'dt',
    'dt64',
    'dd',
    'u',
    'ip4',
    'ip6',
    'e',
    'arr',
    'm',
    't',
    'n',
    'lc',
  ];
  const body =
    '{"columns":' +
    JSON.stringify(cols) +
    ',"data":[' +
    '[-128, 9223372036854775807, "18446744073709551615", "-170141183460469231731687303715884105728", "inf", "12345678.91", true, "s1", "abc", "2024-01-02T03:04:05Z", "2024-01-02 03:04:05.678", "2024-01-02", "123e4567-e89b-12d3-a456-426614174000", "1.2.3.4", "::1", "a", [1,2], {"k":1}, {"x":1,"y":"z"}, null, "lc"],' +
    '[127, -9223372036854775808, 0, 1, "nan", 0.5, 0, "{\\"json\\":1}", "é", 1700000000, 1700000000123, 19000, "123e4567e89b12d3a456426614174000", "0.0.0.0", "1.2.3.4", 2, [], {}, {"x":2}, 7, ""]' +
    ']}';
  const r = await ingestRaw(h, 'typed', body, 'application/json');
  assert.equal(r.statusCode, 200, r.body);
  const got = await rows(
    h,
    `SELECT ${cols.map((c) => `toString(${c})`).join(', ')} FROM default.typed ORDER BY _tp_sn`,
  );
  assert.deepEqual(got, [
    [
      '-128',
      '9223372036854775807',
      '18446744073709551615',
      '-170141183460469231731687303715884105728',
      'inf',
      '12345678.91',
      'true',
      's1',
      'abc',
      '2024-01-02 03:04:05',
      '2024-01-02 03:04:05.678',
      '2024-01-02',
      '123e4567-e89b-12d3-a456-426614174000',
      '1.2.3.4',
      '::1',
      'a',
      '[1,2]',
      "{'k':1}",
      "(1,'z')",
      null,
      'lc',
    ],
    [
      '127',
      '-9223372036854775808',
      '0',
      '1',
      'nan',
      '0.5',
      'false',
      '{"json":1}',
      'é',
      '2023-11-14 22:13:20',
      '2023-11-14 22:13:20.123',
      '2022-01-08',
      '123e4567-e89b-12d3-a456-426614174000',
      '0.0.0.0',
      '::ffff:1.2.3.4',
      'b',
      '[]',
      '{}',
      "(2,'')",
      '7',
      '',
    ],
  ]);
});

test('_tp_time: the commit time by default, the value given when a row has one, event_time_column otherwise', async () => {
  const t0 = Date.now();
  await ingestCompact(h, 'events', ['id', 'name'], [[40, 'now']]);
  await ingestCompact(h, 'events', ['id', 'name', '_tp_time'], [[41, 'given', '2020-05-06 07:08:09.123']]);
  const got = (await rows(
    h,
    'SELECT id, toString(toUnixTimestamp64Milli(_tp_time)) FROM default.events WHERE id IN (40, 41) ORDER BY id',
  )) as [string, string][];
  const commit = Number(got[0]?.[1]);
  assert.ok(commit >= t0 - 5 && commit <= Date.now() + 5, `${commit} vs ${t0}`);
  assert.equal(got[1]?.[1], String(Date.UTC(2020, 4, 6, 7, 8, 9, 123)));
  await createStream(h, {
    name: 'timed',
    columns: [
      { name: 'ts', type: 'string' },
      { name: 'v', type: 'int32' },
    ],
    event_time_column: 'ts',
    event_time_timezone: 'Asia/Tokyo',
  });
  await ingestCompact(h, 'timed', ['ts', 'v'], [['2024-01-01 09:00:00', 1]]);
  const [[utc]] = (await rows(h, "SELECT toString(_tp_time, 'UTC') FROM default.timed")) as [[string]];
  assert.equal(utc, '2024-01-01 00:00:00.000');
});

test('a gzip or deflate Content-Encoding is decoded', async () => {
  const { gzipSync, deflateSync } = await import('node:zlib');
  const before = await count(h, 'events');
  let r = await ingestRaw(
    h,
    'events',
    gzipSync('{"id":60,"name":"gz"}\n{"id":61,"name":"gz"}'),
    'application/x-ndjson',
    {
      headers: { 'content-encoding': 'gzip' },
    },
  );
  assert.equal(r.statusCode, 200, r.body);
  r = await ingestRaw(h, 'events', deflateSync('{"columns":["id"],"data":[[62]]}'), 'application/json', {
    headers: { 'content-encoding': 'deflate' },
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(await count(h, 'events'), before + 3);
  r = await ingestRaw(h, 'events', 'not gzip', 'application/json', {
    headers: { 'content-encoding': 'gzip' },
  });
  assert.equal(r.statusCode, 400, r.body);
  r = await ingestRaw(h, 'events', 'x', 'application/json', { headers: { 'content-encoding': 'br' } });
  assert.equal(r.statusCode, 415, r.body);
  assert.equal(await count(h, 'events'), before + 3);
});

test('an empty request is accepted and writes nothing', async () => {
  const before = await count(h, 'events');
  for (const [ct, body] of [
    ['application/json', '{"columns":["id"],"data":[]}'],
    ['application/x-ndjson', ''],
    ['text/plain;format=lines', '\n\n'],
  ] as const) {
    const r = await ingestRaw(h, ct.startsWith('text') ? 'logs' : 'events', body, ct);
    assert.equal(r.statusCode, 200, `${ct} ${r.body}`);
  }
  assert.equal(await count(h, 'events'), before);
});
