import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { assertError, count, createStream, ingestCompact, ingestRaw, rows } from '../helpers/streams.ts';

let h: Harness;

before(async () => {
  h = await startHarness();
  await createStream(h, {
    name: 'events',
    columns: [
      { name: 'id', type: 'int64' },
      { name: 'name', type: 'string' },
      { name: 'at', type: 'datetime64(3)' },
      { name: 'ts', type: 'string', default: "'2024-01-01 00:00:00'" },
    ],
  });
  // _tp_time's DEFAULT converts `ts`: a `ts` that is no time fails inside the engine only.
  await createStream(h, {
    name: 'timed',
    columns: [
      { name: 'ts', type: 'string' },
      { name: 'v', type: 'int32' },
    ],
    event_time_column: 'ts',
    event_time_timezone: 'UTC',
  });
  await ingestCompact(h, 'events', ['id', 'name'], [[1, 'seed']]);
});

after(() => h.close());

interface State {
  rows: number;
  committed: number;
  walBytes: number;
}

async function state(stream = 'events'): Promise<State> {
  const s = h.trb.services.streams;
  return {
    rows: await count(h, stream),
    committed: s.committedSn('default', stream),
    walBytes: (await s.statistics('default', stream)).streamingBytes,
  };
}

/** Send a bad request: the error must be the expected one and nothing may have been written. */
async function refused(
  body: string | Buffer,
  contentType: string | undefined,
  status: number,
  code: number,
  message: RegExp,
  options: { stream?: string; query?: string; headers?: Record<string, string> } = {},
): Promise<void> {
  const stream = options.stream ?? 'events';
  const before = await state(stream);
  const r = await ingestRaw(h, stream, body, contentType, options);
  assertError(r, status, code, message);
  assert.deepEqual(await state(stream), before, 'the rejected request wrote something');
}

test('unknown column (compact header and streaming row)', async () => {
  await refused(
    '{"columns":["id","nope"],"data":[[1,2]]}',
    'application/json',
    400,
    ERRORS.INGEST_UNKNOWN_COLUMN.code,
    /Unknown column nope for stream events/,
  );
  await refused(
    '{"id":1}\n{"id":2}\n{"id":3,"nope":1}',
    'application/x-ndjson',
    400,
    ERRORS.INGEST_UNKNOWN_COLUMN.code,
    /nope .*\(row 3\)/,
  );
  await refused('anything', 'text/plain', 400, ERRORS.INGEST_UNKNOWN_COLUMN.code, /Unknown column raw/);
  await refused(
    'a\nb',
    'text/plain;format=lines',
    400,
    ERRORS.INGEST_UNKNOWN_COLUMN.code,
    /Unknown column raw/,
  );
});

test('wrong type: the row and column are named, and earlier good rows are not written', async () => {
  await refused(
    '{"columns":["id","name"],"data":[[2,"a"],[3,"b"],["x","c"]]}',
    'application/json',
    400,
    ERRORS.INGEST_BAD_VALUE.code,
    /^Row 3, column id: expected an integer \(int64\), got the string "x"$/,
  );
  await refused(
    '{"id":2}\n{"id":3,"at":"2024-01-01T00:00:00Z"}\n{"id":4,"at":[1]}',
    'application/x-ndjson',
    400,
    ERRORS.INGEST_BAD_VALUE.code,
    /^Row 3, column at:/,
  );
  await refused(
    '{"columns":["id"],"data":[[9223372036854775808]]}',
    'application/json',
    400,
    ERRORS.INGEST_BAD_VALUE.code,
    /Row 1, column id: .*out of range/,
  );
  await refused(
    '{"columns":["id"],"data":[[1.5]]}',
    'application/json',
    400,
    ERRORS.INGEST_BAD_VALUE.code,
    /Row 1, column id/,
  );
});

test('a date-time the engine cannot read (checked by the engine) is refused', async () => {
  await refused(
    '{"columns":["id","at"],"data":[[1,"Jan 2 2024 10:00"],[2,"the day after tomorrow"]]}',
    'application/json',
    400,
    ERRORS.INGEST_BAD_VALUE.code,
    /Row 2, column at: "the day after tomorrow" is not a date-time/,
  );
  const before = await count(h, 'events');
  await ingestCompact(h, 'events', ['id', 'at'], [[50, 'Jan 2 2024 10:00']]);
  assert.equal(await count(h, 'events'), before + 1);
});

test('missing column: a row shorter than "columns"', async () => {
  await refused(
    '{"columns":["id","name"],"data":[[2,"a"],[3]]}',
    'application/json',
    400,
    ERRORS.INGEST_MISSING_COLUMN.code,
    /^Row 2: required column name is missing$/,
  );
});

test('read-only columns: _tp_sn and ALIAS columns', async () => {
  await refused(
    '{"columns":["id","_tp_sn"],"data":[[2,99]]}',
    'application/json',
    400,
    ERRORS.INGEST_READ_ONLY_COLUMN.code,
    /_tp_sn/,
  );
  await h.trb.services.streams.create(
    {
      name: 'aliased',
      columns: [
        { name: 'a', type: 'int32' },
        { name: 'b', type: 'int32', alias: 'a * 2' },
      ],
    },
    { id: 'admin', name: 'admin' },
  );
  await refused(
    '{"a":1,"b":2}',
    'application/x-ndjson',
    400,
    ERRORS.INGEST_READ_ONLY_COLUMN.code,
    /Column b of stream aliased cannot be written \(it is an ALIAS column\)/,
    {
      stream: 'aliased',
    },
  );
  await ingestCompact(h, 'aliased', ['a'], [[21]]);
  assert.deepEqual(await rows(h, 'SELECT a, b FROM default.aliased'), [[21, 42]]);
});

test('malformed JSON and shapes', async () => {
  await refused(
    '{"columns":["id"],"data":[[1]',
    'application/json',
    400,
    ERRORS.INGEST_MALFORMED.code,
    /Malformed ingest body/,
  );
  await refused('', 'application/json', 400, ERRORS.INGEST_MALFORMED.code, /empty/);
  await refused(
    '{"columns":["id"],"rows":[[1]]}',
    'application/json',
    400,
    ERRORS.INGEST_MALFORMED.code,
    /"data" must be an array/,
  );
  await refused(
    '{"columns":["id"],"data":[[1],[2,3]]}',
    'application/json',
    400,
    ERRORS.INGEST_MALFORMED.code,
    /row 2 has 2 values/,
  );
  await refused('{"id":1}\n{"id":2,}\n', 'application/x-ndjson', 400, ERRORS.INGEST_MALFORMED.code, /row 2/);
  await refused(
    '{"id":1}\n"text"\n',
    'application/x-ndjson',
    400,
    ERRORS.INGEST_MALFORMED.code,
    /row 2 is not a JSON object/,
  );
});

test('a value only the engine can refuse (a DEFAULT that fails) fails alone and writes nothing', async () => {
  const before = await state('timed');
  const good = Array.from({ length: 6 }, (_, i) =>
    ingestRaw(
      h,
      'timed',
      JSON.stringify({ columns: ['ts', 'v'], data: [['2024-01-01 00:00:00', i]] }),
      'application/json',
    ),
  );
  const bad = ingestRaw(
    h,
    'timed',
    JSON.stringify({
      columns: ['ts', 'v'],
      data: [
        ['2024-01-01', 100],
        ['not a time', 101],
      ],
    }),
    'application/json',
  );
  const [badResponse, ...goodResponses] = await Promise.all([bad, ...good]);
  for (const r of goodResponses) assert.equal(r.statusCode, 200, r.body);
  assert.ok(badResponse);
  assert.equal(badResponse.statusCode, 400, badResponse.body);
  assert.ok((badResponse.json() as { code: number }).code < 10000, 'keeps the engine code');
  const after = await state('timed');
  assert.equal(after.rows, before.rows + 6);
  assert.equal(after.committed, before.committed + 6);
  const vs = (await rows(h, 'SELECT v FROM default.timed ORDER BY _tp_sn')).map((r) => r[0]);
  assert.ok(!vs.includes(100) && !vs.includes(101));
  // Sequence numbers stay contiguous.
  const sns = (await rows(h, 'SELECT toString(_tp_sn) FROM default.timed ORDER BY _tp_sn')).map((r) =>
    Number(r[0]),
  );
  assert.deepEqual(
    sns,
    Array.from({ length: sns.length }, (_, i) => i),
  );
});

test('numbers the engine reads differently from JSON (1.0, 1e3 for integers) are re-sent as parsed', async () => {
  const r = await ingestRaw(
    h,
    'events',
    '{"columns":["id","name"],"data":[[1.0,"float-int"],[1e3,"exp-int"]]}',
    'application/json',
  );
  assert.equal(r.statusCode, 200, r.body);
  const got = await rows(
    h,
    "SELECT toString(id), name FROM default.events WHERE name IN ('float-int', 'exp-int') ORDER BY _tp_sn",
  );
  assert.deepEqual(got, [
    ['1', 'float-int'],
    ['1000', 'exp-int'],
  ]);
});

test('request-level errors: media type, format parameter, unknown stream, read-only user', async () => {
  await refused('<xml/>', 'application/xml', 415, ERRORS.UNSUPPORTED_MEDIA_TYPE.code, /application\/xml/);
  await refused(
    '{"a":1}',
    'application/json;format=csv',
    415,
    ERRORS.UNSUPPORTED_MEDIA_TYPE.code,
    /format=csv/,
  );
  await refused(
    '{"columns":["id"],"data":[[1]]}',
    'application/json',
    400,
    ERRORS.INVALID_FIELD.code,
    /format/,
    { query: 'format=csv' },
  );
  const r = await ingestRaw(h, 'nope', '{"columns":["id"],"data":[[1]]}', 'application/json');
  assertError(r, 404, ERRORS.UNKNOWN_STREAM.code, /Stream nope doesn't exist/);
  const created = await h.call('POST', '/v1beta2/users', {
    body: { username: 'reader', password: 'reader-password', role: 'read_only' },
  });
  assert.equal(created.statusCode, 201, created.body);
  await refused(
    '{"columns":["id"],"data":[[1]]}',
    'application/json',
    403,
    ERRORS.FORBIDDEN_READ_ONLY.code,
    /read_only/,
    {
      headers: { authorization: `Basic ${Buffer.from('reader:reader-password').toString('base64')}` },
    },
  );
});

test('no Content-Type at all means compact', async () => {
  const before = await count(h, 'events');
  const r = await h.trb.api.inject({
    method: 'POST',
    url: '/default/api/v1beta2/streams/events/ingest',
    headers: { authorization: `Basic ${Buffer.from('admin:admin-password-for-tests').toString('base64')}` },
    payload: Buffer.from('{"columns":["id"],"data":[[77]]}'),
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(await count(h, 'events'), before + 1);
});
