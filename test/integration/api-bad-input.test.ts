/**
 * Bad input on every route with a body (issue 14, "Bad input"): each field of the wrong type, an
 * unknown field, a duplicate name, an unknown id — each answers its documented 4xx with
 * `{code, message, system}` naming the field, and nothing is stored half.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BODY_LIMIT } from '../../src/api/request-limits.ts';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { assertError } from '../helpers/streams.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
  const s = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'bad_s', columns: [{ name: 'a', type: 'int' }] },
  });
  assert.equal(s.statusCode, 201, s.body);
  const v = await h.call('POST', '/v1beta2/views', { body: { name: 'bad_v', query: 'SELECT a FROM bad_s' } });
  assert.equal(v.statusCode, 201, v.body);
  const u = await h.call('POST', '/v1beta2/users', {
    body: { username: 'bad_u', password: 'bad-user-password' },
  });
  assert.equal(u.statusCode, 201, u.body);
});
after(() => h.close());

type Method = 'POST' | 'PATCH';
interface BodyRoute {
  method: Method;
  path: string;
  /** A valid body: each of its fields is sent again with a value of another JSON type. */
  body: Record<string, unknown>;
  /** What must not exist after a refused request (a GET path answering 404). */
  notStored?: string;
}

const ROUTES: BodyRoute[] = [
  {
    method: 'POST',
    path: '/v1beta2/streams',
    body: {
      name: 'never_s',
      columns: [{ name: 'a', type: 'int', default: '1', codec: 'ZSTD(1)', comment: 'c' }],
      description: 'd',
      mode: 'append',
      event_time_column: 'now64(3)',
      ttl_expression: 'to_datetime(_tp_time) + INTERVAL 1 DAY',
      logstore_retention_bytes: 1,
      logstore_retention_ms: 1,
    },
    notStored: '/v1beta2/streams/never_s',
  },
  {
    method: 'PATCH',
    path: '/v1beta2/streams/bad_s',
    body: { description: 'd', ttl_expression: '', logstore_retention_bytes: 1, logstore_retention_ms: 1 },
  },
  {
    method: 'POST',
    path: '/v1beta2/views',
    body: { name: 'never_v', query: 'SELECT 1', description: 'd', materialized: false },
    notStored: '/v1beta2/views/never_v',
  },
  { method: 'PATCH', path: '/v1beta2/views/bad_v', body: { description: 'd', query: 'SELECT a FROM bad_s' } },
  {
    method: 'POST',
    path: '/v1beta2/users',
    body: { username: 'never_u', password: 'never-password', role: 'read_only' },
    notStored: '/v1beta2/users/never_u',
  },
  {
    method: 'PATCH',
    path: '/v1beta2/users/bad_u',
    body: { password: 'another-password', role: 'read_only' },
  },
  { method: 'PATCH', path: '/v1beta2/workspace', body: { settings: { enabled_user_tracking: true } } },
  {
    method: 'POST',
    path: '/v1beta2/queries',
    body: {
      sql: 'SELECT 1',
      name: 'n',
      description: 'd',
      tags: ['t'],
      batching_policy: { count: 1, time_ms: 1 },
    },
  },
  { method: 'POST', path: '/v1beta2/exec', body: { sql: 'SELECT 1', type: 'historical', timeout_ms: 1000 } },
  { method: 'POST', path: '/v1beta2/format', body: { sql: 'SELECT 1' } },
  { method: 'POST', path: '/v1beta2/sqlanalyze', body: { sql: 'SELECT 1' } },
  { method: 'POST', path: '/v1beta2/auth/api_keys', body: { name: 'k', username: 'bad_u' } },
];

/** A value of another JSON type than `v`. */
function wrongType(v: unknown): unknown {
  if (typeof v === 'string') return 42;
  if (typeof v === 'number') return 'forty-two';
  if (typeof v === 'boolean') return 'yes';
  if (Array.isArray(v)) return 'not a list';
  return 'not an object';
}

/** Every field path of a body (nested objects and the first item of arrays of objects). */
function fieldPaths(body: unknown, prefix: string[] = []): string[][] {
  if (!body || typeof body !== 'object') return [];
  const out: string[][] = [];
  for (const [k, v] of Object.entries(body)) {
    out.push([...prefix, k]);
    if (Array.isArray(v) && v[0] && typeof v[0] === 'object')
      out.push(...fieldPaths(v[0], [...prefix, k, '0']));
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...fieldPaths(v, [...prefix, k]));
  }
  return out;
}

function withValueAt(body: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  let at: Record<string, unknown> = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[path[path.length - 1] as string] = value;
  return copy;
}

async function assertNotStored(route: BodyRoute, what: string): Promise<void> {
  if (!route.notStored) return;
  const r = await h.call('GET', route.notStored);
  assert.equal(r.statusCode, 404, `${what}: ${route.notStored} exists after a refused request`);
}

for (const route of ROUTES) {
  test(`${route.method} ${route.path}: a field of the wrong type or unknown answers 400 naming it`, async () => {
    for (const path of fieldPaths(route.body)) {
      const field = path.join('.');
      const original = path.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], route.body);
      const r = await h.call(route.method, route.path, {
        body: withValueAt(route.body, path, wrongType(original)),
      });
      assertError(r, 400, ERRORS.INVALID_FIELD.code);
      const body = r.json() as { message: string; system: string };
      assert.ok(body.message.includes(field), `${route.method} ${route.path} ${field}: ${body.message}`);
      assert.equal(body.system, 'appserver');
      await assertNotStored(route, field);
    }
    const unknown = await h.call(route.method, route.path, { body: { ...route.body, no_such_field: 1 } });
    assertError(unknown, 400, ERRORS.INVALID_FIELD.code, /no_such_field.*not a known field/);
    await assertNotStored(route, 'no_such_field');
    const notJson = await h.call(route.method, route.path, {
      body: '{"oops": ',
      headers: { 'content-type': 'application/json' },
    });
    assertError(notJson, 400, ERRORS.INVALID_REQUEST.code, /not valid JSON/);
  });
}

test('a duplicate name answers 409 and leaves the first one as it was', async () => {
  const stream = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'bad_s', columns: [{ name: 'z', type: 'string' }] },
  });
  assert.equal(stream.statusCode, 409, stream.body);
  assert.match((stream.json() as { message: string }).message, /bad_s/);
  const cols = ((await h.call('GET', '/v1beta2/streams/bad_s')).json() as { columns: { name: string }[] })
    .columns;
  assert.deepEqual(
    cols.map((c) => c.name),
    ['a', '_tp_time'],
  );
  const view = await h.call('POST', '/v1beta2/views', { body: { name: 'bad_v', query: 'SELECT 2' } });
  assert.equal(view.statusCode, 409, view.body);
  assert.equal(
    ((await h.call('GET', '/v1beta2/views/bad_v')).json() as { query: string }).query,
    'SELECT a FROM bad_s',
  );
  const user = await h.call('POST', '/v1beta2/users', {
    body: { username: 'bad_u', password: 'other-password' },
  });
  assert.equal(user.statusCode, 409, user.body);
});

test('an unknown id or name answers 404 with its code, on every method', async () => {
  const cases: Array<['GET' | 'PATCH' | 'DELETE' | 'POST', string, number, unknown?]> = [
    ['GET', '/v1beta2/streams/no_such', ERRORS.UNKNOWN_STREAM.code],
    ['PATCH', '/v1beta2/streams/no_such', ERRORS.UNKNOWN_STREAM.code, { description: 'd' }],
    ['DELETE', '/v1beta2/streams/no_such', ERRORS.UNKNOWN_STREAM.code],
    ['GET', '/v1beta2/streams/no_such/stats', ERRORS.UNKNOWN_STREAM.code],
    ['POST', '/v1beta2/streams/no_such/ingest', ERRORS.UNKNOWN_STREAM.code, { columns: ['a'], data: [[1]] }],
    ['GET', '/v1beta2/views/no_such', ERRORS.UNKNOWN_STREAM.code],
    ['PATCH', '/v1beta2/views/no_such', ERRORS.UNKNOWN_STREAM.code, { description: 'd' }],
    ['DELETE', '/v1beta2/views/no_such', ERRORS.UNKNOWN_STREAM.code],
    ['GET', '/v1beta2/users/no_such', ERRORS.USER_NOT_FOUND.code],
    ['PATCH', '/v1beta2/users/no_such', ERRORS.USER_NOT_FOUND.code, { role: 'admin' }],
    ['DELETE', '/v1beta2/users/no_such', ERRORS.USER_NOT_FOUND.code],
    ['GET', '/v1beta2/queries/no_such', ERRORS.QUERY_NOT_FOUND.code],
    ['POST', '/v1beta2/queries/no_such/cancel', ERRORS.QUERY_NOT_FOUND.code],
    ['DELETE', '/v1beta2/queries/no_such', ERRORS.QUERY_NOT_FOUND.code],
    ['GET', '/v1beta2/queries/no_such/pipeline', ERRORS.QUERY_NOT_FOUND.code],
  ];
  for (const [method, path, code, body] of cases) {
    const r = await h.call(method, path, body === undefined ? {} : { body });
    assert.equal(r.statusCode, 404, `${method} ${path}: ${r.body}`);
    const e = r.json() as { code: number; message: string; system: string };
    assert.equal(e.code, code, `${method} ${path}: ${r.body}`);
    assert.match(e.message, /no_such/, `${method} ${path}`);
  }
});

test('an oversized body answers 413 naming the limit, before it is read; nothing is stored', async () => {
  const r = await h.call('POST', '/v1beta2/streams', {
    body: JSON.stringify({ name: 'never_big', columns: [{ name: 'a', type: 'int' }] }),
    headers: { 'content-type': 'application/json', 'content-length': String(BODY_LIMIT + 1) },
  });
  assertError(r, 413, ERRORS.BODY_TOO_LARGE.code, new RegExp(String(BODY_LIMIT)));
  assert.equal((await h.call('GET', '/v1beta2/streams/never_big')).statusCode, 404);
});
