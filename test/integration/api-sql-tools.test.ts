import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatSql } from '../../src/sql/index.ts';
import type { Credentials, Harness } from '../helpers/harness.ts';
import { startHarness } from '../helpers/harness.ts';

let h: Harness;
const READER: Credentials = { user: 'reader', password: 'reader-password' };

before(async () => {
  h = await startHarness();
  let r = await h.call('POST', '/v1beta2/users', {
    body: { username: 'reader', password: 'reader-password', role: 'read_only' },
  });
  assert.equal(r.statusCode, 201);
  for (const sql of [
    'CREATE STREAM orders (id int64, customer string, amount float64, note nullable(string))',
    'CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 100',
    'CREATE VIEW order_totals AS SELECT customer, sum(amount) AS total FROM table(orders) GROUP BY customer',
  ]) {
    r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
    assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
  }
});
after(async () => {
  await h.close();
});

function assertError(
  r: { statusCode: number; body: string },
  status: number,
  code: number,
  message?: RegExp,
): void {
  assert.equal(r.statusCode, status, r.body);
  const body = JSON.parse(r.body) as { code: number; message: string };
  assert.equal(body.code, code, r.body);
  if (message) assert.match(body.message, message);
}

// ---- POST /v1beta2/format ----

test('format answers {sql} formatted canonically', async () => {
  const sql = 'select customer,count() as n from orders where amount>10 group by customer';
  const r = await h.call('POST', '/v1beta2/format', { body: { sql } });
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(r.json(), { sql: formatSql(sql) });
  assert.equal(
    r.json().sql,
    'SELECT\n  customer, count() AS n\nFROM\n  orders\nWHERE\n  amount > 10\nGROUP BY\n  customer',
  );
  const two = await h.call('POST', '/v1beta2/format', { body: { sql: 'select 1; select 2' } });
  assert.equal(two.json().sql, 'SELECT\n  1;\n\nSELECT\n  2');
});

test('format: a syntax error answers 400 SQL_SYNTAX_ERROR with line and column', async () => {
  const r = await h.call('POST', '/v1beta2/format', { body: { sql: 'select a\nfrom s where' } });
  assertError(r, 400, 62, /line 2, column 13/);
  assert.equal(r.json().system, 'timeplusd');
});

test('format: a body without sql is refused', async () => {
  assertError(await h.call('POST', '/v1beta2/format', { body: {} }), 400, 10102, /sql/);
  assertError(await h.call('POST', '/v1beta2/format', { body: { sql: 42 } }), 400, 10102, /sql/);
  assertError(await h.call('POST', '/v1beta2/format', { body: { sql: '' } }), 400, 10102, /sql/);
});

// ---- POST /v1beta2/sqlanalyze ----

test('sqlanalyze: a streaming aggregation with result types from the engine', async () => {
  const sql = 'SELECT customer, count() AS n, sum(amount) * 2 AS twice FROM orders GROUP BY customer';
  const r = await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql } });
  assert.equal(r.statusCode, 200, r.body);
  const a = r.json();
  assert.equal(a.original_query, sql);
  assert.equal(a.query_type, 'select');
  assert.equal(a.is_streaming, true);
  assert.equal(a.has_aggr, true);
  assert.equal(a.has_subquery, false);
  assert.equal(a.has_table_join, false);
  assert.equal(a.has_union, false);
  assert.deepEqual(a.group_by_columns, ['customer']);
  assert.deepEqual(a.result_columns, [
    { database: 'default', table: 'orders', column: 'customer', column_type: 'string', is_view: false },
    { database: '', table: '', column: 'n', column_type: 'uint64', is_view: false },
    { database: '', table: '', column: 'twice', column_type: 'float64', is_view: false },
  ]);
  assert.deepEqual(
    a.required_columns.map((c: { column: string; column_type: string }) => [c.column, c.column_type]),
    [
      ['customer', 'string'],
      ['amount', 'float64'],
    ],
  );
  assert.match(a.rewritten_query, /`default`\.`orders`/);
});

test('sqlanalyze: table(), views (streaming and bounded), joins, unions', async () => {
  let a = (
    await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT note FROM table(orders)' } })
  ).json();
  assert.equal(a.is_streaming, false);
  assert.equal(a.result_columns[0].column_type, 'nullable(string)');

  a = (
    await h.call('POST', '/v1beta2/sqlanalyze', {
      body: { sql: 'SELECT id, amount + 1 AS a1 FROM big_orders' },
    })
  ).json();
  assert.equal(a.is_streaming, true);
  assert.deepEqual(a.result_columns, [
    { database: 'default', table: 'big_orders', column: 'id', column_type: 'int64', is_view: true },
    { database: '', table: '', column: 'a1', column_type: 'float64', is_view: false },
  ]);

  a = (await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT * FROM order_totals' } })).json();
  assert.equal(a.is_streaming, false, 'a view over table() is bounded');
  assert.deepEqual(
    a.result_columns.map((c: { column: string; column_type: string }) => [c.column, c.column_type]),
    [
      ['customer', 'string'],
      ['total', 'float64'],
    ],
  );

  a = (
    await h.call('POST', '/v1beta2/sqlanalyze', {
      body: {
        sql: 'SELECT o.id FROM orders AS o INNER JOIN table(orders) AS p ON o.id = p.id UNION ALL SELECT 1',
      },
    })
  ).json();
  assert.equal(a.has_table_join, true);
  assert.equal(a.has_union, true);
  assert.equal(a.result_columns[0].column_type, 'int64');
});

test('sqlanalyze: streaming-only SQL keeps what the analyzer knows', async () => {
  const r = await h.call('POST', '/v1beta2/sqlanalyze', {
    body: { sql: 'SELECT id, emit_version() AS v FROM orders' },
  });
  assert.equal(r.statusCode, 200, r.body);
  const a = r.json();
  assert.equal(a.is_streaming, true);
  assert.deepEqual(
    a.result_columns.map((c: { column: string; column_type: string }) => [c.column, c.column_type]),
    [
      ['id', 'int64'],
      ['v', ''],
    ],
  );
});

test('sqlanalyze: statements other than SELECT', async () => {
  const r = await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'CREATE STREAM x (a int)' } });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.json().query_type, 'create');
  const d = await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'DROP VIEW big_orders' } });
  assert.equal(d.json().query_type, 'drop');
  // analysis changes nothing
  assert.equal((await h.call('GET', '/v1beta2/views/big_orders')).statusCode, 200);
});

test('sqlanalyze errors: unknown stream 404 (60), syntax 400 (62), unknown column (engine 47), bad body', async () => {
  assertError(
    await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT * FROM nope' } }),
    404,
    60,
    /nope/,
  );
  assertError(
    await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT * FROM orders JOIN nope2 ON 1' } }),
    404,
    60,
    /nope2/,
  );
  assertError(
    await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT FROM WHERE' } }),
    400,
    62,
    /line 1, column/,
  );
  assertError(
    await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT no_such_col FROM orders' } }),
    400,
    47,
    /no_such_col/,
  );
  assertError(
    await h.call('POST', '/v1beta2/sqlanalyze', { body: { query: 'SELECT 1' } }),
    400,
    10102,
    /sql/,
  );
});

// ---- POST /v1beta2/pipeline/parseddl ----

function parseDdlCall(body: string, contentType = 'application/json', as?: Credentials) {
  return h.call('POST', '/v1beta2/pipeline/parseddl', {
    body,
    headers: { 'content-type': contentType },
    ...(as ? { as } : {}),
  });
}

test('parseddl: a bare JSON string names the resource', async () => {
  let r = await parseDdlCall(JSON.stringify('CREATE STREAM metrics.cpu (v float64)'));
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(r.json(), {
    parsed: true,
    resourceDB: 'metrics',
    resourceName: 'cpu',
    resourceType: 'stream',
  });
  r = await parseDdlCall(JSON.stringify('CREATE VIEW v AS SELECT * FROM orders'));
  assert.deepEqual(r.json(), {
    parsed: true,
    resourceDB: 'default',
    resourceName: 'v',
    resourceType: 'view',
  });
  r = await parseDdlCall(JSON.stringify('CREATE MATERIALIZED VIEW mv INTO t AS SELECT 1'));
  assert.equal(r.json().resourceType, 'materialized_view');
  r = await parseDdlCall(JSON.stringify('DROP STREAM IF EXISTS s'));
  assert.deepEqual(r.json(), {
    parsed: true,
    resourceDB: 'default',
    resourceName: 's',
    resourceType: 'stream',
  });
});

test('parseddl: the body is read as JSON whatever its Content-Type', async () => {
  for (const type of ['text/plain', 'application/octet-stream']) {
    const r = await parseDdlCall(JSON.stringify('CREATE STREAM y (a int)'), type);
    assert.equal(r.statusCode, 200, `${type}: ${r.body}`);
    assert.equal(r.json().resourceName, 'y');
  }
});

test('parseddl: text that is not DDL or does not parse answers parsed: false', async () => {
  for (const text of ['SELECT 1', 'CREATE STREM x', '']) {
    const r = await parseDdlCall(JSON.stringify(text));
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), { parsed: false, resourceDB: '', resourceName: '', resourceType: '' });
  }
});

test('parseddl: a body that is not a JSON string is refused, naming the problem', async () => {
  let r = await parseDdlCall(JSON.stringify({ sql: 'CREATE STREAM x (a int)' }));
  assertError(r, 400, 10102, /must be a JSON string.*got a JSON object/);
  r = await parseDdlCall('42');
  assertError(r, 400, 10102, /got a JSON number/);
  r = await parseDdlCall('["CREATE STREAM x (a int)"]');
  assertError(r, 400, 10102, /got an array/);
  r = await parseDdlCall('null');
  assertError(r, 400, 10102, /got null/);
  r = await parseDdlCall('CREATE STREAM x (a int)', 'text/plain');
  assertError(r, 400, 10101, /not valid JSON/);
  r = await parseDdlCall('{"a": 1}', 'text/plain');
  assertError(r, 400, 10102, /got a JSON object/);
  r = await parseDdlCall('"unterminated');
  assertError(r, 400, 10101, /not valid JSON/);
});

// ---- access ----

test('read_only users may format, analyze and parse DDL; nobody may without credentials', async () => {
  let r = await h.call('POST', '/v1beta2/format', { body: { sql: 'select 1' }, as: READER });
  assert.equal(r.statusCode, 200, r.body);
  r = await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql: 'SELECT id FROM orders' }, as: READER });
  assert.equal(r.statusCode, 200, r.body);
  r = await parseDdlCall(JSON.stringify('CREATE STREAM x (a int)'), 'application/json', READER);
  assert.equal(r.statusCode, 200, r.body);
  r = await h.call('POST', '/v1beta2/format', { body: { sql: 'select 1' }, as: null });
  assert.equal(r.statusCode, 401);
});
