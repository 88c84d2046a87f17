/**
 * `SET` in a script (src/queries/session-settings.ts): the settings apply to the statements after
 * it in the same request, under each statement's own SETTINGS; a setting no query may carry is
 * refused at the SET; the next request starts without them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { assertError, ingestCompact } from '../helpers/streams.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** The rows of a /queries answer (SSE body of a historical query). */
function dataRows(body: string): unknown[][] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: ['))
    .flatMap((l) => JSON.parse(l.slice('data: '.length)) as unknown[][]);
}

async function query(sql: string, as?: { user: string; password: string }) {
  return h.call('POST', '/v1beta2/queries', { body: { sql }, ...(as ? { as } : {}) });
}

// An outer join's missing side: the column's default (0) without join_use_nulls, NULL with it.
const LEFT_JOIN = 'SELECT r.b FROM (SELECT 1 AS a) AS l LEFT JOIN (SELECT 2 AS a, 5 AS b) AS r ON l.a = r.a';

test('a SET applies to the statements after it in the same script', async () => {
  const plain = await query(LEFT_JOIN);
  assert.equal(plain.statusCode, 200, plain.body);
  assert.deepEqual(dataRows(plain.body), [[0]]);

  const set = await query(`SET join_use_nulls = 1; ${LEFT_JOIN}`);
  assert.equal(set.statusCode, 200, set.body);
  assert.deepEqual(dataRows(set.body), [[null]]);
  assert.match(set.body, /"type":"nullable\(uint8\)"/);
});

test("a statement's own SETTINGS win over the script's SET; a later SET replaces an earlier one", async () => {
  const own = await query(`SET join_use_nulls = 1; ${LEFT_JOIN} SETTINGS join_use_nulls = 0`);
  assert.equal(own.statusCode, 200, own.body);
  assert.deepEqual(dataRows(own.body), [[0]]);

  const later = await query(`SET join_use_nulls = 1; SET join_use_nulls = 0; ${LEFT_JOIN}`);
  assert.equal(later.statusCode, 200, later.body);
  assert.deepEqual(dataRows(later.body), [[0]]);
});

test('the next request starts without the settings of an earlier one', async () => {
  const alone = await query('SET join_use_nulls = 1');
  assert.equal(alone.statusCode, 204, alone.body);
  const next = await query(LEFT_JOIN);
  assert.deepEqual(dataRows(next.body), [[0]]);
});

test("SET query_mode = 'table' makes a SELECT over a stream historical", async () => {
  const created = await query('CREATE STREAM set_mode (a int)');
  assert.equal(created.statusCode, 204, created.body);
  await ingestCompact(h, 'set_mode', ['a'], [[1], [2], [3]]);
  const r = await query("SET query_mode = 'table'; SELECT sum(a) FROM set_mode");
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(dataRows(r.body), [[6]]);
  assert.match(r.body, /"status":"finished"/);
});

test('a SET of a setting no query may carry is refused, and nothing after it runs', async () => {
  const r = await query('SET max_memory_usage = 0; CREATE STREAM set_never (a int); SELECT 1');
  assertError(r, 403, ERRORS.SETTING_NOT_ALLOWED.code, /max_memory_usage/);
  assertError(await h.call('GET', '/v1beta2/streams/set_never'), 404, ERRORS.UNKNOWN_STREAM.code);
  assertError(await query('SET readonly = 0'), 403, ERRORS.SETTING_NOT_ALLOWED.code, /readonly/);
});

test('a read_only user may SET, and /exec accepts SET in either type', async () => {
  const reader = { user: 'set_reader', password: 'reader-password' };
  const made = await h.call('POST', '/v1beta2/users', {
    body: { username: reader.user, password: reader.password, role: 'read_only' },
  });
  assert.equal(made.statusCode, 201, made.body);
  const r = await query(`SET join_use_nulls = 1; ${LEFT_JOIN}`, reader);
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(dataRows(r.body), [[null]]);

  const hist = await h.call('POST', '/v1beta2/exec', {
    body: { type: 'historical', sql: `SET join_use_nulls = 1; ${LEFT_JOIN}` },
  });
  assert.equal(hist.statusCode, 200, hist.body);
  const ddl = await h.call('POST', '/v1beta2/exec', {
    body: { type: 'ddl', sql: 'SET join_use_nulls = 1; CREATE STREAM set_ddl (a int)' },
  });
  assert.equal(ddl.statusCode, 204, ddl.body);
});
