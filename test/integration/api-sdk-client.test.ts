/**
 * The API driven the way Timeplus's official Python SDK drives it (issue 14): every unset
 * optional field sent as JSON null, `int` columns, Python `datetime` values in ingest
 * (`isoformat()`, with microseconds and with an offset, and `str()`), and
 * `Content-Type: application/json` on every call, DELETE with an empty body included. Every
 * answer is checked.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** One SDK call: JSON body (or none) and the JSON content type, always. */
function sdk(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return h.call(method, path, {
    body: body === undefined ? '' : JSON.stringify(body),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'OpenAPI-Generator/1.0.0/python',
    },
  });
}

/** ColumnDef as the SDK serializes it: every optional attribute present as null. */
function column(name: string, type: string): Record<string, unknown> {
  return {
    name,
    type,
    default: null,
    codec: null,
    comment: null,
    ttl_expression: null,
    skipping_index_expression: null,
  };
}

const STREAM_DEF_NULLS = {
  description: null,
  engine: null,
  event_time_column: null,
  event_time_timezone: null,
  logstore_retention_bytes: null,
  logstore_retention_ms: null,
  mode: null,
  order_by_expression: null,
  order_by_granularity: null,
  partition_by_granularity: null,
  primary_key: null,
  replication_factor: null,
  shards: null,
  ttl_expression: null,
  column_families: null,
  secondary_indexes: null,
};

test('a stream, its ingest of Python values, queries and views, as the SDK calls them', async () => {
  const created = await sdk('POST', '/v1beta2/streams', {
    ...STREAM_DEF_NULLS,
    name: 'sdk_readings',
    columns: [
      column('id', 'int'),
      column('value', 'float64'),
      column('label', 'string'),
      column('at', 'datetime64(6)'),
      column('ok', 'bool'),
    ],
  });
  assert.equal(created.statusCode, 201, created.body);
  const stream = created.json() as { name: string; columns: { name: string; type: string }[] };
  assert.equal(stream.name, 'sdk_readings');
  assert.deepEqual(
    stream.columns.filter((c) => !c.name.startsWith('_tp')).map((c) => c.type),
    ['int32', 'float64', 'string', 'datetime64(6)', 'bool'],
  );

  const got = await sdk('GET', '/v1beta2/streams/sdk_readings');
  assert.equal(got.statusCode, 200, got.body);
  const listed = await sdk('GET', '/v1beta2/streams');
  assert.equal(listed.statusCode, 200, listed.body);
  assert.ok((listed.json() as { name: string }[]).some((s) => s.name === 'sdk_readings'));

  // datetime.isoformat() with microseconds, an aware datetime's isoformat() and str().
  const ingest = await sdk('POST', '/v1beta2/streams/sdk_readings/ingest', {
    columns: ['id', 'value', 'label', 'at', 'ok'],
    data: [
      [1, 1.5, 'a', '2024-01-01T00:00:01.123456', true],
      [2, 2, 'b', '2024-01-01T00:00:02+00:00', false],
      [3, -3.25, 'c', '2024-01-01 00:00:03+00:00', true],
      [4, 0, 'd', '2024-01-01 00:00:04.5', false],
    ],
  });
  assert.equal(ingest.statusCode, 200, ingest.body);

  const exec = await sdk('POST', '/v1beta2/exec', {
    sql: 'SELECT id, value, label, to_string(at) AS at, ok FROM table(sdk_readings) ORDER BY id',
    type: 'historical',
    timeout_ms: null,
  });
  assert.equal(exec.statusCode, 200, exec.body);
  const doc = exec.json() as { columns: { name: string }[]; data: unknown[][] };
  assert.deepEqual(
    doc.columns.map((c) => c.name),
    ['id', 'value', 'label', 'at', 'ok'],
  );
  assert.deepEqual(doc.data, [
    [1, 1.5, 'a', '2024-01-01 00:00:01.123456', true],
    [2, 2, 'b', '2024-01-01 00:00:02.000000', false],
    [3, -3.25, 'c', '2024-01-01 00:00:03.000000', true],
    [4, 0, 'd', '2024-01-01 00:00:04.500000', false],
  ]);

  // CreateQueryRequestV1Beta2 with its optional fields as null.
  const query = await sdk('POST', '/v1beta2/queries', {
    sql: 'SELECT count() AS n, sum(id) AS s FROM table(sdk_readings)',
    name: null,
    description: null,
    tags: null,
    batching_policy: null,
  });
  assert.equal(query.statusCode, 200, query.body);
  const batches = [...query.body.matchAll(/^data: (\[\[.*)$/gm)].flatMap(
    (m) => JSON.parse(m[1] ?? '[]') as unknown[][],
  );
  assert.deepEqual(batches, [[4, 10]]);
  const first = /event: query\ndata: (.*)/.exec(query.body);
  const started = JSON.parse(first?.[1] ?? '{}') as { id: string; start_time: number };
  const id = started.id;
  assert.ok(id);
  // metrics.last_event_time: when the query sent its last rows (not 0 once it sent any).
  const metrics = [...query.body.matchAll(/event: metrics\ndata: (.*)/g)].map(
    (m) => JSON.parse(m[1] ?? '{}') as { last_event_time: number; count: number },
  );
  const last = metrics.at(-1);
  assert.equal(last?.count, 1);
  assert.ok((last?.last_event_time ?? 0) >= started.start_time, JSON.stringify(last));
  assert.ok((last?.last_event_time ?? 0) <= Date.now());
  const one = await sdk('GET', `/v1beta2/queries/${id}`);
  assert.equal(one.statusCode, 200, one.body);
  assert.equal((one.json() as { status: string }).status, 'finished');
  assert.equal((await sdk('POST', `/v1beta2/queries/${id}/cancel`)).statusCode, 204);
  assert.equal((await sdk('DELETE', `/v1beta2/queries/${id}`)).statusCode, 204);
  assert.equal((await sdk('GET', `/v1beta2/queries/${id}`)).statusCode, 404);

  const view = await sdk('POST', '/v1beta2/views', {
    name: 'sdk_view',
    query: 'SELECT id, label FROM sdk_readings WHERE ok',
    description: null,
    materialized: false,
    target_stream: null,
    ttl_expression: null,
    logstore_retention_bytes: null,
    logstore_retention_ms: null,
  });
  assert.equal(view.statusCode, 201, view.body);
  const viewRows = await sdk('POST', '/v1beta2/exec', {
    sql: 'SELECT id, label FROM table(sdk_view) ORDER BY id',
    type: 'historical',
  });
  assert.equal(viewRows.statusCode, 200, viewRows.body);
  assert.deepEqual((viewRows.json() as { data: unknown[][] }).data, [
    [1, 'a'],
    [3, 'c'],
  ]);
  const patched = await sdk('PATCH', '/v1beta2/views/sdk_view', {
    description: 'odd ones',
    query: null,
    ttl_expression: null,
    logstore_retention_bytes: null,
    logstore_retention_ms: null,
  });
  assert.equal(patched.statusCode, 204, patched.body);
  assert.equal(
    ((await sdk('GET', '/v1beta2/views/sdk_view')).json() as { description: string }).description,
    'odd ones',
  );

  const updated = await sdk('PATCH', '/v1beta2/streams/sdk_readings', {
    description: 'from the SDK',
    ttl_expression: null,
    logstore_retention_bytes: null,
    logstore_retention_ms: null,
  });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal((updated.json() as { description: string }).description, 'from the SDK');

  assert.equal((await sdk('DELETE', '/v1beta2/views/sdk_view')).statusCode, 204);
  assert.equal((await sdk('DELETE', '/v1beta2/streams/sdk_readings')).statusCode, 204);
  assert.equal((await sdk('GET', '/v1beta2/streams/sdk_readings')).statusCode, 404);
});

test('users and the workspace, as the SDK calls them', async () => {
  const made = await sdk('POST', '/v1beta2/users', {
    username: 'sdk_user',
    password: 'sdk-user-password',
    role: null,
  });
  assert.equal(made.statusCode, 201, made.body);
  const user = await sdk('GET', '/v1beta2/users/sdk_user');
  assert.equal(user.statusCode, 200, user.body);
  const patched = await sdk('PATCH', '/v1beta2/users/sdk_user', { password: null, role: 'admin' });
  assert.equal(patched.statusCode, 200, patched.body);
  assert.equal(((await sdk('GET', '/v1beta2/users/sdk_user')).json() as { role: string }).role, 'admin');
  assert.equal((await sdk('PATCH', '/v1beta2/workspace', { settings: null })).statusCode, 204);
  assert.equal((await sdk('DELETE', '/v1beta2/users/sdk_user')).statusCode, 204);
});
