import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { assertError, createStream, ingestCompact, rows } from '../helpers/streams.ts';

let h: Harness;

before(async () => {
  h = await startHarness();
});

after(() => h.close());

const AUDIT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

test('POST /streams answers 201 with the Stream resource, every field filled', async () => {
  const s = await createStream(h, {
    name: 'orders',
    description: 'all the orders',
    columns: [
      { name: 'id', type: 'int64', comment: 'order id' },
      { name: 'note', type: 'nullable(string)', codec: 'ZSTD(1)' },
      { name: 'qty', type: 'int32', default: '1' },
      { name: 'ts', type: "datetime64(3, 'UTC')" },
    ],
    event_time_column: 'ts',
    ttl_expression: '_tp_time + INTERVAL 30 DAY',
    logstore_retention_bytes: 1073741824,
    logstore_retention_ms: 604800000,
  });
  assert.equal(s.name, 'orders');
  assert.equal(s.description, 'all the orders');
  assert.equal(s.engine, 'Stream');
  assert.equal(s.mode, 'append');
  assert.equal(s.ttl, '_tp_time + INTERVAL 30 DAY');
  assert.equal(s.ttl_expression, '_tp_time + INTERVAL 30 DAY');
  assert.equal(s.logstore_retention_bytes, 1073741824);
  assert.equal(s.logstore_retention_ms, 604800000);
  assert.equal(s.is_external, false);
  assert.deepEqual(s.column_families, []);
  assert.deepEqual(s.secondary_indexes, []);
  assert.equal(s.primary_key, undefined);
  assert.deepEqual(s.columns, [
    { name: 'id', type: 'int64', nullable: false, default: '', codec: '', comment: 'order id' },
    {
      name: 'note',
      type: 'nullable(string)',
      nullable: true,
      default: '',
      codec: 'CODEC(ZSTD(1))',
      comment: '',
    },
    { name: 'qty', type: 'int32', nullable: false, default: '1', codec: '', comment: '' },
    { name: 'ts', type: "datetime64(3, 'UTC')", nullable: false, default: '', codec: '', comment: '' },
    {
      name: '_tp_time',
      type: "datetime64(3, 'UTC')",
      nullable: false,
      default: 'ts',
      codec: 'CODEC(DoubleDelta, LZ4)',
      comment: '',
    },
  ]);
  assert.match(
    String(s.create_query),
    /^CREATE STREAM default\.orders\n\(\n {2}`id` int64 COMMENT 'order id',/,
  );
  assert.match(
    String(s.create_query),
    /TTL _tp_time \+ INTERVAL 30 DAY\nSETTINGS mode = 'append', event_time_column = 'ts'/,
  );
  assert.match(String(s.created_at), AUDIT);
  assert.deepEqual(s.created_by, { id: 'admin', name: 'admin' });
  assert.deepEqual(s.last_updated_by, { id: 'admin', name: 'admin' });
});

test('kv streams: primary key shown, required, and modes validated', async () => {
  const s = await createStream(h, {
    name: 'prices',
    mode: 'versioned_kv',
    primary_key: 'sku',
    columns: [
      { name: 'sku', type: 'string' },
      { name: 'price', type: 'float64' },
    ],
  });
  assert.equal(s.mode, 'versioned_kv');
  assert.equal(s.primary_key, 'sku');
  let r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'nokey', mode: 'changelog_kv', columns: [{ name: 'a', type: 'int8' }] },
  });
  assertError(
    r,
    400,
    ERRORS.BAD_ARGUMENTS.code,
    /^Primary key is required for changelog kv or versioned kv stream$/,
  );
  r = await h.call('POST', '/v1beta2/streams', { body: { name: 'badmode', mode: 'upsert' } });
  assertError(r, 400, ERRORS.INVALID_FIELD.code, /mode/);
});

test('creation errors: duplicate name, bad names and fields, reserved columns, unknown types, mutable streams', async () => {
  await createStream(h, { name: 'dup', columns: [{ name: 'a', type: 'int8' }] });
  let r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'dup', columns: [{ name: 'a', type: 'int8' }] },
  });
  assertError(r, 409, ERRORS.STREAM_ALREADY_EXISTS.code, /dup/);
  r = await h.call('POST', '/v1beta2/streams', { body: { name: '1bad', columns: [] } });
  assertError(r, 400, ERRORS.INVALID_FIELD.code, /name/);
  r = await h.call('POST', '/v1beta2/streams', { body: { name: 'x', colums: [] } });
  assertError(r, 400, ERRORS.INVALID_FIELD.code, /colums/);
  r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'x', columns: [{ name: '_tp_foo', type: 'int8' }] },
  });
  assertError(r, 400, ERRORS.ILLEGAL_COLUMN.code, /reserved/);
  r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'x', columns: [{ name: 'a', type: 'int99' }] },
  });
  assertError(r, 400, ERRORS.UNKNOWN_TYPE.code, /int99/);
  r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'x', engine: 'MutableStream', columns: [{ name: 'a', type: 'int8' }] },
  });
  assertError(r, 400, ERRORS.NOT_IMPLEMENTED.code, /MutableStream/);
  r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'x', columns: [{ name: 'a', type: 'int8' }], event_time_column: 'b' },
  });
  assertError(r, 400, ERRORS.INVALID_FIELD.code, /event_time_column/);
  r = await h.call('POST', '/v1beta2/streams?db=nowhere', {
    body: { name: 'x', columns: [{ name: 'a', type: 'int8' }] },
  });
  assertError(r, 404, ERRORS.UNKNOWN_DATABASE.code, /nowhere/);
  // A failed creation leaves nothing behind: the name is free.
  const ok = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'x', columns: [{ name: 'a', type: 'int8' }] },
  });
  assert.equal(ok.statusCode, 201, ok.body);
});

test('granularities of the REST StreamDef become ORDER BY / PARTITION BY', async () => {
  const s = await createStream(h, {
    name: 'gran',
    columns: [{ name: 'a', type: 'int8' }],
    order_by_granularity: 'm',
    partition_by_granularity: 'M',
  });
  assert.match(
    String(s.create_query),
    /ORDER BY to_start_of_minute\(_tp_time\)\nPARTITION BY to_YYYYMM\(_tp_time\)/,
  );
  const [[ddl]] = (await rows(
    h,
    "SELECT create_table_query FROM system.tables WHERE database = 'default' AND name = '.tp_history.gran'",
  )) as [[string]];
  assert.match(ddl, /PARTITION BY toYYYYMM\(_tp_time\)/);
  assert.match(ddl, /ORDER BY toStartOfMinute\(_tp_time\)/);
});

test('GET /streams lists streams (expand adds sizes); GET /streams/{name}; ?db=', async () => {
  await createStream(h, { name: 'listed', columns: [{ name: 'a', type: 'int32' }] });
  await ingestCompact(h, 'listed', ['a'], [[1], [2], [3]]);
  let r = await h.call('GET', '/v1beta2/streams');
  assert.equal(r.statusCode, 200);
  const list = r.json() as Array<Record<string, unknown>>;
  const listed = list.find((s) => s.name === 'listed');
  assert.ok(listed);
  assert.equal(listed.row_count, undefined);
  r = await h.call('GET', '/v1beta2/streams?expand=true');
  const expanded = (r.json() as Array<Record<string, unknown>>).find((s) => s.name === 'listed');
  assert.equal(expanded?.row_count, 3);
  assert.equal(typeof expanded?.historical_data_bytes, 'number');
  assert.ok((expanded?.streaming_data_bytes as number) > 0);
  r = await h.call('GET', '/v1beta2/streams/listed');
  assert.equal(r.statusCode, 200);
  assert.equal((r.json() as { row_count: number }).row_count, 3);
  assertError(await h.call('GET', '/v1beta2/streams/none'), 404, ERRORS.UNKNOWN_STREAM.code, /none/);
  await h.trb.services.engine.query('CREATE DATABASE IF NOT EXISTS sales');
  await createStream(h, { name: 'listed', columns: [{ name: 'b', type: 'int32' }] }, 'sales');
  const inSales = (await h.call('GET', '/v1beta2/streams?db=sales')).json() as Array<{
    name: string;
    columns: unknown[];
  }>;
  assert.deepEqual(
    inSales.map((s) => s.name),
    ['listed'],
  );
  assert.equal((await h.call('GET', '/v1beta2/streams/listed?db=sales')).json().columns[0].name, 'b');
  const dbs = (await h.call('GET', '/v1beta2/databases')).json() as Array<{ name: string }>;
  assert.ok(dbs.some((d) => d.name === 'default') && dbs.some((d) => d.name === 'sales'));
  assert.ok(!dbs.some((d) => d.name === 'system' || d.name.startsWith('_tributary')));
});

test('PATCH /streams/{name} changes description, TTL and retention', async () => {
  await createStream(h, { name: 'patched', columns: [{ name: 'a', type: 'int32' }] });
  const before = (await h.call('GET', '/v1beta2/streams/patched')).json() as Record<string, unknown>;
  let r = await h.call('PATCH', '/v1beta2/streams/patched', {
    body: {
      description: 'new',
      ttl_expression: '_tp_time + INTERVAL 1 DAY',
      logstore_retention_bytes: 1000,
      logstore_retention_ms: 2000,
    },
  });
  assert.equal(r.statusCode, 200, r.body);
  const s = r.json() as Record<string, unknown>;
  assert.equal(s.description, 'new');
  assert.equal(s.ttl_expression, '_tp_time + INTERVAL 1 DAY');
  assert.equal(s.logstore_retention_bytes, 1000);
  assert.equal(s.logstore_retention_ms, 2000);
  assert.match(String(s.create_query), /TTL _tp_time \+ INTERVAL 1 DAY/);
  assert.equal(s.created_at, before.created_at);
  const [[ddl]] = (await rows(
    h,
    "SELECT create_table_query FROM system.tables WHERE database = 'default' AND name = '.tp_history.patched'",
  )) as [[string]];
  assert.match(ddl, /TTL _tp_time \+ toIntervalDay\(1\)/);
  r = await h.call('PATCH', '/v1beta2/streams/patched', { body: { ttl_expression: '' } });
  assert.equal((r.json() as { ttl: string }).ttl, '');
  r = await h.call('PATCH', '/v1beta2/streams/patched', { body: { mode: 'changelog' } });
  assertError(r, 400, ERRORS.INVALID_FIELD.code, /mode/);
  assertError(
    await h.call('PATCH', '/v1beta2/streams/none', { body: { description: 'x' } }),
    404,
    ERRORS.UNKNOWN_STREAM.code,
  );
});

test('GET /streams/{name}/stats: events, bytes, rows and the per-node lagging status', async () => {
  await createStream(h, { name: 'measured', columns: [{ name: 'a', type: 'int32' }] });
  let st = (await h.call('GET', '/v1beta2/streams/measured/stats')).json() as Record<string, unknown>;
  assert.equal(st.row_count, 0);
  assert.equal(st.earliest_event, undefined);
  await ingestCompact(
    h,
    'measured',
    ['a', '_tp_time'],
    [
      [1, '2024-01-01 00:00:00.5'],
      [2, '2024-01-02 00:00:00'],
    ],
  );
  await h.trb.services.streams.flush('default', 'measured');
  st = (await h.call('GET', '/v1beta2/streams/measured/stats')).json() as Record<string, unknown>;
  assert.equal(st.row_count, 2);
  assert.equal(st.earliest_event, '2024-01-01T00:00:00.500Z');
  assert.equal(st.latest_event, '2024-01-02T00:00:00.000Z');
  assert.ok((st.historical_data_bytes as number) > 0);
  assert.ok((st.streaming_data_bytes as number) > 0);
  const [node] = st.nodes as Array<Record<string, unknown>>;
  assert.ok(node);
  assert.equal(node.node_id, 1);
  const lag = (
    node.lagging_status as Record<string, { applied_sn: number; committed_sn: number; timestamp: number }>
  )['0'];
  assert.equal(lag?.committed_sn, 1);
  assert.equal(lag?.applied_sn, 1);
  assert.equal(typeof lag?.timestamp, 'number');
  assertError(await h.call('GET', '/v1beta2/streams/none/stats'), 404, ERRORS.UNKNOWN_STREAM.code);
});

test('DELETE /streams/{name} removes the stream, its tables and its WAL', async () => {
  await createStream(h, { name: 'gone', columns: [{ name: 'a', type: 'int32' }] });
  await ingestCompact(h, 'gone', ['a'], [[1]]);
  const r = await h.call('DELETE', '/v1beta2/streams/gone');
  assert.equal(r.statusCode, 204);
  assertError(await h.call('GET', '/v1beta2/streams/gone'), 404, ERRORS.UNKNOWN_STREAM.code);
  assertError(await h.call('DELETE', '/v1beta2/streams/gone'), 404, ERRORS.UNKNOWN_STREAM.code);
  const tables = await rows(
    h,
    "SELECT name FROM system.tables WHERE database = 'default' AND name LIKE '%gone%'",
  );
  assert.deepEqual(tables, []);
  // The name can be used again and starts from sequence number 0.
  await createStream(h, { name: 'gone', columns: [{ name: 'b', type: 'string' }] });
  await ingestCompact(h, 'gone', ['b'], [['again']]);
  assert.deepEqual(await rows(h, 'SELECT b, toString(_tp_sn) FROM default.gone'), [['again', '0']]);
});

test('read_only users may list and read streams but not change them', async () => {
  const created = await h.call('POST', '/v1beta2/users', {
    body: { username: 'viewer', password: 'viewer-password', role: 'read_only' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const as = { user: 'viewer', password: 'viewer-password' };
  assert.equal((await h.call('GET', '/v1beta2/streams', { as })).statusCode, 200);
  assert.equal((await h.call('GET', '/v1beta2/streams/orders/stats', { as })).statusCode, 200);
  assertError(
    await h.call('POST', '/v1beta2/streams', { as, body: { name: 'nope' } }),
    403,
    ERRORS.FORBIDDEN_READ_ONLY.code,
  );
  assertError(
    await h.call('DELETE', '/v1beta2/streams/orders', { as }),
    403,
    ERRORS.FORBIDDEN_READ_ONLY.code,
  );
});
