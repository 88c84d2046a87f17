/**
 * What real clients send, accepted everywhere (issue 14, scope 3): optional fields as JSON null,
 * `Content-Type: application/json` with an empty body, a wrong method on a known path (405 with
 * `Allow`), `x-request-id` on every answer, and several `;`-separated statements on /exec and
 * /queries.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { assertError, count, ingestCompact } from '../helpers/streams.ts';

let h: Harness;
/** The server's log lines (at debug). */
const lines: string[] = [];
before(async () => {
  h = await startHarness({
    logger: pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) }),
  });
});
after(() => h.close());

const JSON_HEADERS = { 'content-type': 'application/json' };

test('optional fields sent as null mean absent, in nested objects too', async () => {
  const stream = await h.call('POST', '/v1beta2/streams', {
    body: {
      name: 'nulls',
      description: null,
      columns: [{ name: 'a', type: 'int', default: null, codec: null, comment: null }],
      event_time_column: null,
      ttl_expression: null,
      logstore_retention_bytes: null,
      logstore_retention_ms: null,
      mode: null,
      primary_key: null,
    },
  });
  assert.equal(stream.statusCode, 201, stream.body);
  assert.equal((stream.json() as { description: string }).description, '');

  const view = await h.call('POST', '/v1beta2/views', {
    body: {
      name: 'nulls_view',
      query: 'SELECT a FROM nulls',
      description: null,
      materialized: null,
      target_stream: null,
      ttl_expression: null,
      logstore_retention_bytes: null,
      logstore_retention_ms: null,
    },
  });
  assert.equal(view.statusCode, 201, view.body);

  const patched = await h.call('PATCH', '/v1beta2/views/nulls_view', {
    body: { description: 'now described', query: null, ttl_expression: null },
  });
  assert.equal(patched.statusCode, 204, patched.body);

  await ingestCompact(h, 'nulls', ['a'], [[1], [2]]);
  const q = await h.call('POST', '/v1beta2/queries', {
    body: {
      sql: 'SELECT count() AS n FROM table(nulls)',
      name: null,
      description: null,
      tags: null,
      type: null,
      batching_policy: { count: null, time_ms: null },
    },
  });
  assert.equal(q.statusCode, 200, q.body);
  assert.match(q.body, /\[2\]|\["2"\]/);

  const user = await h.call('POST', '/v1beta2/users', {
    body: { username: 'nulluser', password: 'a-long-enough-password', role: null },
  });
  assert.equal(user.statusCode, 201, user.body);
});

test('a required field sent as null is refused by name; nothing is stored', async () => {
  const r = await h.call('POST', '/v1beta2/streams', {
    body: { name: null, columns: [{ name: 'a', type: 'int' }] },
  });
  assertError(r, 400, ERRORS.INVALID_FIELD.code, /name/);
  const v = await h.call('POST', '/v1beta2/views', { body: { name: 'v_null_query', query: null } });
  assertError(v, 400, ERRORS.INVALID_FIELD.code, /query/);
  assertError(await h.call('GET', '/v1beta2/views/v_null_query'), 404, ERRORS.UNKNOWN_STREAM.code);
});

test('Content-Type: application/json with an empty body is accepted on body-less routes', async () => {
  await h.call('POST', '/v1beta2/streams', {
    body: { name: 'empty_body', columns: [{ name: 'a', type: 'int' }] },
  });
  const got = await h.call('GET', '/v1beta2/streams/empty_body', { headers: JSON_HEADERS, body: '' });
  assert.equal(got.statusCode, 200, got.body);
  const del = await h.call('DELETE', '/v1beta2/streams/empty_body', { headers: JSON_HEADERS, body: '' });
  assert.equal(del.statusCode, 204, del.body);
  const cancel = await h.call('POST', '/v1beta2/queries/no-such-query/cancel', {
    headers: JSON_HEADERS,
    body: '',
  });
  assert.equal(cancel.statusCode, 404, cancel.body);
  // A route that needs a body still says so.
  const create = await h.call('POST', '/v1beta2/streams', { headers: JSON_HEADERS, body: '' });
  assert.equal(create.statusCode, 400, create.body);
  assert.equal((create.json() as { code: number }).code, ERRORS.INVALID_FIELD.code);
});

test('a known path with the wrong method answers 405 with Allow; an unknown one 404', async () => {
  const r = await h.call('PUT', '/v1beta2/streams');
  assertError(r, 405, ERRORS.METHOD_NOT_ALLOWED.code, /PUT/);
  assert.deepEqual(String(r.headers.allow).split(', ').sort(), ['GET', 'HEAD', 'POST']);
  const byName = await h.call('POST', '/v1beta2/streams/anything');
  assertError(byName, 405, ERRORS.METHOD_NOT_ALLOWED.code);
  assert.match(String(byName.headers.allow), /DELETE/);
  assert.match(String(byName.headers.allow), /PATCH/);
  const slash = await h.call('GET', '/v1beta2/streams/');
  assert.notEqual(slash.statusCode, 405, slash.body);
  const unknown = await h.call('GET', '/v1beta2/no-such-thing');
  assertError(unknown, 404, ERRORS.ROUTE_NOT_FOUND.code);
  assert.equal(unknown.headers.allow, undefined);
});

test('every answer carries x-request-id: a valid incoming one echoed, else a new one', async () => {
  const echoed = await h.call('GET', '/v1beta2/streams', { headers: { 'x-request-id': 'client-42.abc' } });
  assert.equal(echoed.headers['x-request-id'], 'client-42.abc');
  const fresh = await h.call('GET', '/v1beta2/streams');
  const other = await h.call('GET', '/v1beta2/streams');
  assert.match(String(fresh.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.notEqual(fresh.headers['x-request-id'], other.headers['x-request-id']);
  const invalid = await h.call('GET', '/v1beta2/streams', {
    headers: { 'x-request-id': 'has spaces\tand tabs' },
  });
  assert.match(String(invalid.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  // Errors, unauthenticated calls and query event streams too.
  for (const r of [
    await h.call('GET', '/v1beta2/streams/missing'),
    await h.call('GET', '/v1beta2/streams', { as: null }),
    await h.call('GET', '/v1beta2/nowhere'),
    await h.call('POST', '/v1beta2/queries', { body: { sql: 'SELECT 1' } }),
  ]) {
    assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/, `${r.statusCode} ${r.body}`);
  }
});

test('several statements on /exec run in order; every one fits the type', async () => {
  const ddl = await h.call('POST', '/v1beta2/exec', {
    body: {
      type: 'ddl',
      sql: 'CREATE STREAM script_s (a int); INSERT INTO script_s (a) VALUES (1), (2); INSERT INTO script_s (a) VALUES (3)',
    },
  });
  assert.equal(ddl.statusCode, 204, ddl.body);
  assert.equal(await count(h, 'script_s'), 3);
  // type "historical" runs nothing that changes data, in a script too: refused before any runs.
  const mixed = await h.call('POST', '/v1beta2/exec', {
    body: {
      type: 'historical',
      sql: 'INSERT INTO script_s (a) VALUES (4); DROP STREAM script_s; SELECT count() FROM table(script_s)',
    },
  });
  assertError(mixed, 400, ERRORS.WRONG_QUERY_TYPE.code, /type "ddl"/);
  assert.equal(await count(h, 'script_s'), 3);
});

test('a script answering rows before its last statement is refused before anything runs', async () => {
  const r = await h.call('POST', '/v1beta2/exec', {
    body: { type: 'ddl', sql: 'CREATE STREAM script_never (a int); SELECT 1; SELECT 2' },
  });
  assertError(r, 400, ERRORS.INVALID_FIELD.code, /statement 2 of 3/);
  assertError(await h.call('GET', '/v1beta2/streams/script_never'), 404, ERRORS.UNKNOWN_STREAM.code);
  const syntax = await h.call('POST', '/v1beta2/exec', {
    body: { type: 'ddl', sql: 'CREATE STREAM script_never (a int); SELEC 2' },
  });
  assertError(syntax, 400, ERRORS.SQL_SYNTAX_ERROR.code);
  assertError(await h.call('GET', '/v1beta2/streams/script_never'), 404, ERRORS.UNKNOWN_STREAM.code);
});

test('several statements on /queries: DDL runs in order, the last statement streams', async () => {
  const r = await h.call('POST', '/v1beta2/queries', {
    body: {
      sql: 'CREATE STREAM script_q (a int); INSERT INTO script_q (a) VALUES (7); SELECT a FROM table(script_q)',
    },
  });
  assert.equal(r.statusCode, 200, r.body);
  assert.match(r.body, /^data: \[\[7\]\]$/m);
});

test('errors are logged with the request id (refusals at debug)', async () => {
  const r = await h.call('GET', '/v1beta2/streams/not_there', { headers: { 'x-request-id': 'trace-me-7' } });
  assert.equal(r.statusCode, 404);
  const line = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.reqId === 'trace-me-7');
  assert.ok(line, lines.join(''));
  assert.equal(line.code, ERRORS.UNKNOWN_STREAM.code);
  assert.match(String(line.msg), /not_there/);
});
