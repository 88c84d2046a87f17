import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TributaryError } from '../../src/errors/tributary-error.ts';
import { defineStream } from '../../src/stream/define-stream.ts';
import { prepareBatch, prepareBatchNow, toJsonValue } from '../../src/stream/ingest-batch.ts';
import { parseIngestBody } from '../../src/stream/ingest-body.ts';
import { StreamSchema } from '../../src/stream/stream-schema.ts';

const schema = new StreamSchema(
  defineStream({
    name: 'events',
    columns: [
      { name: 'id', type: 'int64' },
      { name: 'name', type: 'string' },
      { name: 'score', type: 'nullable(float64)' },
      { name: 'at', type: 'datetime64(3)' },
      { name: 'twice', type: 'int64', alias: 'id * 2' },
    ],
  }),
);

async function rejects(
  body: string,
  format: 'compact' | 'streaming',
  errorName: string,
  message: RegExp,
  options = {},
): Promise<void> {
  await assert.rejects(
    prepareBatch(schema, parseIngestBody(Buffer.from(body), format), options),
    (e: unknown) => {
      assert.ok(e instanceof TributaryError, String(e));
      assert.equal(e.errorName, errorName, e.message);
      assert.match(e.message, message);
      assert.equal(e.status, 400);
      return true;
    },
  );
}

test('a good compact body becomes a batch whose payload is the request bytes', async () => {
  const body = '{"columns":["id","name"],"data":[[1,"a"],[2,"b"]]}';
  const b = await prepareBatch(schema, parseIngestBody(Buffer.from(body), 'compact'), {
    idempotencyId: 'k1',
  });
  assert.equal(b.rows, 2);
  assert.equal(b.format, 'JSONCompactEachRow');
  assert.deepEqual(b.columns, ['id', 'name']);
  assert.equal(b.payload.toString(), '[1,"a"],[2,"b"]');
  assert.equal(b.reencode?.().toString(), '[1,"a"],[2,"b"]');
  assert.equal(b.idempotencyId, 'k1');
  const nd = await prepareBatch(
    schema,
    parseIngestBody(Buffer.from('{"id":1}\n{"name":"x","_tp_time":"2024-01-01"}'), 'streaming'),
  );
  assert.equal(nd.format, 'JSONEachRow');
  assert.equal(nd.shape, 'E');
  assert.equal(nd.rows, 2);
});

test('errors name the column and row; the first problem wins', async () => {
  await rejects(
    '{"columns":["id","nope"],"data":[[1,2]]}',
    'compact',
    'INGEST_UNKNOWN_COLUMN',
    /^Unknown column nope for stream events$/,
  );
  await rejects(
    '{"id":1}\n{"id":2,"nope":3}',
    'streaming',
    'INGEST_UNKNOWN_COLUMN',
    /nope for stream events \(row 2\)/,
  );
  await rejects(
    '{"columns":["id","_tp_sn"],"data":[[1,2]]}',
    'compact',
    'INGEST_READ_ONLY_COLUMN',
    /_tp_sn.*assigned at ingest/,
  );
  await rejects('{"twice":4}', 'streaming', 'INGEST_READ_ONLY_COLUMN', /twice.*ALIAS/);
  await rejects(
    '{"columns":["id","name"],"data":[[1,"a"],[2]]}',
    'compact',
    'INGEST_MISSING_COLUMN',
    /^Row 2: required column name is missing$/,
  );
  await rejects(
    '{"columns":["id"],"data":[[1],[2,3]]}',
    'compact',
    'INGEST_MALFORMED',
    /row 2 has 2 values but "columns" names 1/,
  );
  await rejects(
    '{"columns":["id"],"data":[[1],5]}',
    'compact',
    'INGEST_MALFORMED',
    /row 2 of "data" is not an array/,
  );
  await rejects('{"columns":["id","id"],"data":[]}', 'compact', 'INGEST_MALFORMED', /appears twice/);
  await rejects('{"columns":[],"data":[[]]}', 'compact', 'INGEST_MALFORMED', /"columns" is empty/);
  await rejects(
    '{"columns":["id","at"],"data":[[1,"2024-01-01"],[2,"2024-01-01"],[3,1.5]]}',
    'compact',
    'INGEST_BAD_VALUE',
    /^Row 3, column at: /,
  );
  await rejects(
    '{"id":1}\n{"id":"x"}',
    'streaming',
    'INGEST_BAD_VALUE',
    /^Row 2, column id: expected an integer/,
  );
  await rejects(
    '{"columns":["id"],"data":[["9223372036854775808"]]}',
    'compact',
    'INGEST_BAD_VALUE',
    /out of range/,
  );
});

test('null: the default for a non-nullable column, NULL for a nullable one, missing for a required one', async () => {
  const b = await prepareBatch(
    schema,
    parseIngestBody(Buffer.from('{"columns":["id","score"],"data":[[null,null]]}'), 'compact'),
  );
  assert.equal(b.rows, 1);
  await rejects(
    '{"columns":["id","name"],"data":[[1,null]]}',
    'compact',
    'INGEST_MISSING_COLUMN',
    /Row 1: required column name/,
    {
      requiredColumns: ['name'],
    },
  );
  await rejects(
    '{"columns":["id"],"data":[[1]]}',
    'compact',
    'INGEST_MISSING_COLUMN',
    /Row 1: required column name/,
    {
      requiredColumns: ['name'],
    },
  );
  await rejects(
    '{"name":"a"}\n{"id":1}',
    'streaming',
    'INGEST_MISSING_COLUMN',
    /Row 2: required column name/,
    {
      requiredColumns: ['name'],
    },
  );
});

test('integers beyond 2^53 are validated after a lossless parse and pass through exactly', async () => {
  const body = '{"columns":["id"],"data":[[9223372036854775807],[-9223372036854775808]]}';
  const b = await prepareBatch(schema, parseIngestBody(Buffer.from(body), 'compact'));
  assert.equal(b.payload.toString(), '[9223372036854775807],[-9223372036854775808]');
  assert.equal(b.reencode?.().toString(), '["9223372036854775807"],["-9223372036854775808"]');
  await rejects(
    '{"columns":["id"],"data":[[9223372036854775808]]}',
    'compact',
    'INGEST_BAD_VALUE',
    /Row 1, column id: .*out of range/,
  );
  await rejects('{"id":1}\n{"id":18446744073709551616}', 'streaming', 'INGEST_BAD_VALUE', /Row 2, column id/);
});

test('date-times in other spellings are verified by the engine in one call', async () => {
  const seen: string[][] = [];
  const verify = async (_kind: string, values: string[]) => {
    seen.push(values);
    return values.map((v) => v !== 'garbage');
  };
  const ok = '{"columns":["at"],"data":[["2024-01-02"],["Jan 2 2024"],["2 Jan 2024 10:00"]]}';
  await prepareBatch(schema, parseIngestBody(Buffer.from(ok), 'compact'), { verifyDoubts: verify });
  assert.deepEqual(seen, [['Jan 2 2024', '2 Jan 2024 10:00']]);
  const bad = '{"columns":["at"],"data":[["Jan 2 2024"],["garbage"]]}';
  await assert.rejects(
    prepareBatch(schema, parseIngestBody(Buffer.from(bad), 'compact'), { verifyDoubts: verify }),
    /Row 2, column at: "garbage" is not a date-time/,
  );
});

test('in-process values become JSON values', () => {
  assert.deepEqual(
    toJsonValue([
      1n,
      new Date(0),
      Number.NaN,
      Number.POSITIVE_INFINITY,
      undefined,
      { a: -Infinity },
      new Map([[1, 2n]]),
    ]),
    ['1', '1970-01-01T00:00:00.000Z', 'nan', 'inf', null, { a: '-inf' }, { 1: '2' }],
  );
});

test('prepareBatchNow answers the batch itself when no value needs the engine, a promise when one does', async () => {
  const verify = async (_kind: string, values: string[]) => values.map(() => true);
  const plain = prepareBatchNow(
    schema,
    parseIngestBody(Buffer.from('{"columns":["id","at"],"data":[[1,"2024-01-02T03:04:05Z"]]}'), 'compact'),
    { verifyDoubts: verify },
  );
  assert.ok(!(plain instanceof Promise));
  assert.equal(plain.rows, 1);
  const doubtful = prepareBatchNow(
    schema,
    parseIngestBody(Buffer.from('{"columns":["id","at"],"data":[[1,"Jan 2 2024"]]}'), 'compact'),
    { verifyDoubts: verify },
  );
  assert.ok(doubtful instanceof Promise);
  assert.equal((await doubtful).rows, 1);
  // A bad request without doubts throws at once, naming the row and column.
  assert.throws(
    () =>
      prepareBatchNow(schema, parseIngestBody(Buffer.from('{"columns":["id"],"data":[["x"]]}'), 'compact')),
    /Row 1, column id/,
  );
});

test('a column list accepted once is remembered per schema: other lists and other schemas are still checked', async () => {
  const good = '{"columns":["id","name"],"data":[[1,"a"]]}';
  for (let i = 0; i < 2; i++) {
    const b = await prepareBatch(schema, parseIngestBody(Buffer.from(good), 'compact'));
    assert.equal(b.shape, 'C\u0001id\u0001name');
    assert.deepEqual(b.columns, ['id', 'name']);
  }
  await rejects('{"columns":["id","nope"],"data":[[1,"a"]]}', 'compact', 'INGEST_UNKNOWN_COLUMN', /nope/);
  await rejects('{"columns":["id","id"],"data":[[1,2]]}', 'compact', 'INGEST_MALFORMED', /appears twice/);
  await rejects('{"columns":["id","twice"],"data":[[1,2]]}', 'compact', 'INGEST_READ_ONLY_COLUMN', /twice/);
  await rejects('{"columns":["id","name"],"data":[["x","a"]]}', 'compact', 'INGEST_BAD_VALUE', /id/);
  assert.equal((await prepareBatch(schema, parseIngestBody(Buffer.from(good), 'compact'))).rows, 1);
  // The same list against another schema, where `name` is an ALIAS column: refused there.
  const other = new StreamSchema(
    defineStream({
      name: 'events2',
      columns: [
        { name: 'id', type: 'int64' },
        { name: 'name', type: 'string', alias: 'to_string(id)' },
      ],
    }),
  );
  await assert.rejects(
    prepareBatch(other, parseIngestBody(Buffer.from(good), 'compact')),
    (e: unknown) => e instanceof TributaryError && e.errorName === 'INGEST_READ_ONLY_COLUMN',
  );
  // Required columns are checked per request, whatever list was remembered.
  await rejects(good, 'compact', 'INGEST_MISSING_COLUMN', /score/, { requiredColumns: ['score'] });
});
