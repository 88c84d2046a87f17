/**
 * SQL limits through the four routes that take SQL (/format, /sqlanalyze, /exec, /queries):
 * 10,000-term operator chains work end to end, including in the engine; input nested beyond the
 * limit answers a 4xx naming it, never a 500. And /exec enforces its `type`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';
import { collectSse } from '../helpers/sse.ts';

let h: Harness;
let base = '';

before(async () => {
  h = await startHarness();
  base = `${await h.trb.listen()}/default/api`;
  const r = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'CREATE STREAM lim (a int64, b string)', type: 'ddl' },
  });
  assert.equal(r.statusCode, 204, r.body);
  const ins = await h.call('POST', '/v1beta2/exec', {
    body: { sql: "INSERT INTO lim (a, b) VALUES (1, 'x'), (2, 'y'), (20000, 'z')", type: 'ddl' },
  });
  assert.equal(ins.statusCode, 204, ins.body);
});
after(async () => {
  await h.close();
});

const terms = (n: number, op: string, term: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => term(i)).join(op);

/** POST /queries over real HTTP (large SSE events need a real socket), answering status and events. */
async function runQuery(sql: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${base}/v1beta2/queries`, {
    method: 'POST',
    headers: { ...authHeader(ADMIN), 'content-type': 'application/json' },
    body: JSON.stringify({ sql }),
  });
  if (!res.headers.get('content-type')?.includes('text/event-stream'))
    return { status: res.status, body: await res.text() };
  const events = await collectSse(res.body as ReadableStream<Uint8Array>);
  return {
    status: res.status,
    body: JSON.stringify(events.filter((e) => e.event !== 'metrics' && e.event !== 'query')),
  };
}

test('10,000 OR terms format, analyze and run on /exec and /queries', async () => {
  const sql = `SELECT count() FROM table(lim) WHERE ${terms(10000, ' OR ', (i) => `a = ${i}`)}`;
  const f = await h.call('POST', '/v1beta2/format', { body: { sql } });
  assert.equal(f.statusCode, 200, f.body.slice(0, 300));
  const a = await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql } });
  assert.equal(a.statusCode, 200, a.body.slice(0, 300));
  const e = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
  assert.equal(e.statusCode, 200, e.body.slice(0, 300));
  assert.deepEqual(e.json().data, [[2]]);
  const q = await runQuery(sql);
  assert.equal(q.status, 200, q.body.slice(0, 300));
  assert.match(q.body, /\[2\]/, q.body.slice(0, 300));
});

// The engine's time dominates (seconds per statement of 10,000 terms on a small machine), so the
// other operators go through /format and /exec only; the SQL front end is the same on every route.
test('10,000 AND / || / + terms format and run on /exec', async () => {
  const cases: [string, string, unknown][] = [
    ['AND', `SELECT count() FROM table(lim) WHERE ${terms(10000, ' AND ', (i) => `a != ${i + 5}`)}`, 3],
    ['||', `SELECT length(${terms(10000, ' || ', () => "'x'")}) AS n`, 10000],
    ['+', `SELECT ${terms(10000, ' + ', () => '1')} AS n`, 10000],
  ];
  for (const [label, sql, expected] of cases) {
    const f = await h.call('POST', '/v1beta2/format', { body: { sql } });
    assert.equal(f.statusCode, 200, `${label} /format: ${f.body.slice(0, 300)}`);
    const e = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
    assert.equal(e.statusCode, 200, `${label} /exec: ${e.body.slice(0, 300)}`);
    assert.deepEqual(e.json().data, [[expected]], label);
  }
});

test('198 OR terms (what generated SQL reaches) run', async () => {
  const sql = `SELECT count() FROM table(lim) WHERE ${terms(198, ' OR ', (i) => `a = ${i}`)}`;
  const e = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
  assert.equal(e.statusCode, 200, e.body);
  assert.deepEqual(e.json().data, [[2]]);
});

test('deeply nested input answers a 4xx naming the limit and the position on every route', async () => {
  for (const sql of [
    `SELECT ${'NOT '.repeat(2000)}1`,
    `SELECT ${'- '.repeat(2000)}1`,
    `SELECT ${'('.repeat(5000)}1${')'.repeat(5000)}`,
    `SELECT ${'['.repeat(5000)}1${']'.repeat(5000)}`,
    `SELECT * FROM ${'(SELECT * FROM '.repeat(1000)}lim${')'.repeat(1000)}`,
  ]) {
    for (const route of ['/v1beta2/format', '/v1beta2/sqlanalyze', '/v1beta2/exec', '/v1beta2/queries']) {
      const r = await h.call('POST', route, {
        body: { sql, ...(route === '/v1beta2/exec' ? { type: 'historical' } : {}) },
      });
      assert.equal(r.statusCode, 400, `${route} ${sql.slice(0, 40)}: ${r.body.slice(0, 300)}`);
      const body = r.json() as { code: number; message: string };
      assert.equal(body.code, 62, r.body.slice(0, 300));
      assert.match(body.message, /line 1, column \d+: Maximum parse depth \(256\) exceeded/);
    }
  }
});

test('/exec type "historical" refuses statements that change something; "ddl" refuses SELECT', async () => {
  for (const sql of [
    'DROP STREAM lim',
    "INSERT INTO lim (a, b) VALUES (3, 'w')",
    'CREATE STREAM other (a int)',
    'ALTER STREAM lim ADD COLUMN c int',
    'KILL QUERY WHERE query_id = 1',
    'TRUNCATE STREAM lim',
  ]) {
    const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
    assert.equal(r.statusCode, 400, `${sql}: ${r.body}`);
    assert.equal(r.json().code, 10403, r.body);
    assert.match(r.json().message, /send it with type "ddl"/);
  }
  // Nothing ran: the stream and its rows are still there, unchanged.
  const rows = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT count() FROM table(lim)', type: 'historical' },
  });
  assert.deepEqual(rows.json().data, [[3]]);
  for (const sql of ['SELECT 1', 'SHOW STREAMS', 'DESCRIBE lim']) {
    const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'ddl' } });
    assert.equal(r.statusCode, 400, `${sql}: ${r.body}`);
    assert.equal(r.json().code, 10403, r.body);
    assert.match(r.json().message, /send it with type "historical"/);
  }
  const show = await h.call('POST', '/v1beta2/exec', { body: { sql: 'SHOW STREAMS', type: 'historical' } });
  assert.equal(show.statusCode, 200, show.body);
});
