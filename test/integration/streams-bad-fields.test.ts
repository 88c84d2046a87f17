/**
 * POST /v1beta2/streams and PATCH /v1beta2/streams/{name} with SQL fragments that do not parse (a
 * column's `default`, `codec`, `ttl_expression`, `skipping_index_expression`; the stream's
 * `ttl_expression`, `primary_key`, `order_by_expression`): a 400 naming the field and the position
 * inside it, never a 500, and nothing created or changed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { createStream } from '../helpers/streams.ts';

let h: Harness;

before(async () => {
  h = await startHarness();
  await createStream(h, {
    name: 'kept',
    description: 'before',
    columns: [
      { name: 'a', type: 'int64' },
      { name: 't', type: 'datetime64(3)' },
    ],
    ttl_expression: 'to_datetime(t) + INTERVAL 1 DAY',
  });
});

after(() => h.close());

const COLUMNS = [
  { name: 'a', type: 'int64' },
  { name: 'b', type: 'string' },
  { name: 't', type: 'datetime64(3)' },
];

/** Create `def` with one field made bad: 400 with `message` and the stream does not exist after. */
async function refusedCreate(def: Record<string, unknown>, code: number, message: RegExp): Promise<void> {
  const name = def.name as string;
  const r = await h.call('POST', '/v1beta2/streams', { body: def });
  assert.equal(r.statusCode, 400, r.body);
  const e = r.json() as { code: number; message: string; system: string };
  assert.equal(e.code, code, r.body);
  assert.match(e.message, message);
  const got = await h.call('GET', `/v1beta2/streams/${name}`);
  assert.equal(got.statusCode, 404, `a refused create left ${name} behind: ${got.body}`);
  // The name is free: the same stream without the bad field is created.
  const list = (await h.call('GET', '/v1beta2/streams')).json() as Array<{ name: string }>;
  assert.ok(!list.some((s) => s.name === name));
}

function withColumn(i: number, extra: Record<string, unknown>): Array<Record<string, unknown>> {
  return COLUMNS.map((c, j) => (j === i ? { ...c, ...extra } : c));
}

const SYNTAX = ERRORS.FIELD_SYNTAX_ERROR.code;

test('a column default that does not parse names columns[i].default and the position', async () => {
  await refusedCreate(
    { name: 'bad_default', columns: withColumn(2, { default: 'now() +' }) },
    SYNTAX,
    /^Syntax error in columns\[2\]\.default at line 1, column 8: Expected/,
  );
  await refusedCreate(
    { name: 'bad_default2', columns: withColumn(1, { default: ')(' }) },
    SYNTAX,
    /columns\[1\]\.default at line 1, column 1/,
  );
});

test('ttl_expression, column ttl, primary_key and order_by_expression that do not parse', async () => {
  await refusedCreate(
    { name: 'bad_ttl', columns: COLUMNS, ttl_expression: 'to_datetime(t) +' },
    SYNTAX,
    /^Syntax error in ttl_expression at line 1, column 17/,
  );
  await refusedCreate(
    { name: 'bad_col_ttl', columns: withColumn(0, { ttl_expression: '(((' }) },
    SYNTAX,
    /columns\[0\]\.ttl_expression/,
  );
  await refusedCreate(
    { name: 'bad_pk', columns: COLUMNS, mode: 'versioned_kv', primary_key: '(a,' },
    SYNTAX,
    /^Syntax error in primary_key/,
  );
  await refusedCreate(
    { name: 'bad_order', columns: COLUMNS, order_by_expression: 'a b c' },
    SYNTAX,
    /^Syntax error in order_by_expression/,
  );
});

test('codec and skipping index type that do not parse name their field, not the engine SQL', async () => {
  await refusedCreate(
    { name: 'bad_codec', columns: withColumn(0, { codec: 'ZSTD(' }) },
    SYNTAX,
    /^Syntax error in columns\[0\]\.codec at line 1/,
  );
  await refusedCreate(
    { name: 'bad_codec2', columns: withColumn(0, { codec: 'CODEC(LZ4), (1' }) },
    SYNTAX,
    /columns\[0\]\.codec/,
  );
  await refusedCreate(
    { name: 'bad_index', columns: withColumn(1, { skipping_index_expression: 'bloom_filter(' }) },
    SYNTAX,
    /columns\[1\]\.skipping_index_expression/,
  );
  // Codecs and index types that parse still go through (the engine judges them).
  const ok = await h.call('POST', '/v1beta2/streams', {
    body: {
      name: 'good_codec',
      columns: [
        { name: 'a', type: 'int64', codec: 'CODEC(Delta(8), ZSTD(1))' },
        { name: 'b', type: 'string', skipping_index_expression: 'bloom_filter(0.01) GRANULARITY 2' },
      ],
    },
  });
  assert.equal(ok.statusCode, 201, ok.body);
});

test('expressions the engine refuses at create (a default of the wrong type) leave nothing behind', async () => {
  const r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'bad_type_default', columns: withColumn(0, { default: "'abc'" }) },
  });
  assert.equal(r.statusCode, 400, r.body);
  assert.equal((await h.call('GET', '/v1beta2/streams/bad_type_default')).statusCode, 404);
});

test('PATCH with a ttl_expression that does not parse changes nothing, not even the description', async () => {
  const before = (await h.call('GET', '/v1beta2/streams/kept')).json() as Record<string, unknown>;
  const r = await h.call('PATCH', '/v1beta2/streams/kept', {
    body: { description: 'after', ttl_expression: 'to_datetime(t) + (' },
  });
  assert.equal(r.statusCode, 400, r.body);
  const e = r.json() as { code: number; message: string };
  assert.equal(e.code, SYNTAX, r.body);
  assert.match(e.message, /^Syntax error in ttl_expression at line 1/);
  const now = (await h.call('GET', '/v1beta2/streams/kept')).json() as Record<string, unknown>;
  assert.equal(now.description, 'before');
  assert.equal(now.ttl_expression, before.ttl_expression);
  assert.equal(now.create_query, before.create_query);
  // One the engine refuses (not a time) changes nothing either.
  const sem = await h.call('PATCH', '/v1beta2/streams/kept', {
    body: { description: 'after', ttl_expression: 'a' },
  });
  assert.equal(sem.statusCode, 400, sem.body);
  const still = (await h.call('GET', '/v1beta2/streams/kept')).json() as Record<string, unknown>;
  assert.equal(still.description, 'before');
  assert.equal(still.ttl_expression, before.ttl_expression);
  // A good PATCH still works.
  const ok = await h.call('PATCH', '/v1beta2/streams/kept', {
    body: { description: 'after', ttl_expression: 'to_datetime(t) + INTERVAL 2 DAY' },
  });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.match(String((ok.json() as Record<string, unknown>).ttl_expression), /INTERVAL 2 DAY/);
});
