/**
 * Dictionaries (CREATE DICTIONARY, dict_get*, LIFETIME, DROP / SHOW / SYSTEM RELOAD, REST operations
 * 8-9, topology) on the real engine: sources from a stream, a file in the user files directory and
 * a local HTTP server; refresh polled (no timing thresholds); restart; bad input; the doors a
 * dictionary opens stay Tributary's.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';
import { assertError } from '../helpers/streams.ts';

let api: StreamingApi;
let server: Server;
let port = 0;
let httpBody = '1\tred\n2\tgreen\n';
let httpHits = 0;
let lastAuth = '';

before(async () => {
  api = await StreamingApi.open();
  server = createServer((req, res) => {
    httpHits++;
    lastAuth = String(req.headers.authorization ?? '');
    res.end(httpBody);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.close();
  await api.close();
});

const h = () => api.h;

async function ddl(sql: string) {
  return h().call('POST', '/v1beta2/queries', { body: { sql } });
}

async function ok(sql: string): Promise<void> {
  const r = await ddl(sql);
  assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
}

async function historical(sql: string): Promise<unknown[][]> {
  const r = await h().call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  return (r.json() as { data: unknown[][] }).data;
}

async function ingest(stream: string, columns: string[], data: unknown[][]): Promise<void> {
  const r = await h().call('POST', `/v1beta2/streams/${stream}/ingest`, { body: { columns, data } });
  assert.equal(r.statusCode, 200, r.body);
}

/** Poll `sql` until it answers `expected` (a LIFETIME reload is due); fails with the last answer. */
async function eventually(sql: string, expected: unknown[][], what: string): Promise<void> {
  let last: unknown[][] = [];
  for (let i = 0; i < 300; i++) {
    last = await historical(sql);
    if (JSON.stringify(last) === JSON.stringify(expected)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(last, expected, what);
}

test('a dictionary over a stream: dict_get and its family read the committed rows, latest per key', async () => {
  await ok('CREATE STREAM products (id uint64, name string, price float64)');
  await ingest(
    'products',
    ['id', 'name', 'price'],
    [
      [1, 'apple', 1.5],
      [2, 'pear', 2],
      [1, 'green apple', 1.75],
    ],
  );
  await ok(
    "CREATE DICTIONARY products_dict (id uint64, name string DEFAULT 'unknown', price float64 DEFAULT 0) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'products')) LAYOUT(HASHED()) LIFETIME(MIN 1 MAX 2) COMMENT 'catalogue'",
  );
  assert.deepEqual(
    await historical(
      "SELECT dict_get('products_dict', 'name', to_uint64(1)), dict_get_string('products_dict', 'name', to_uint64(2)), dict_get_or_default('products_dict', 'name', to_uint64(9), 'none'), dict_has('products_dict', to_uint64(2)), dict_has('products_dict', to_uint64(3)), dict_get_float64('products_dict', 'price', to_uint64(1)), dict_get('default.products_dict', 'name', to_uint64(9))",
    ),
    [['green apple', 'pear', 'none', 1, 0, 1.75, 'unknown']],
  );
  assert.deepEqual(
    await historical("SELECT dict_get_or_null('products_dict', 'name', to_uint64(7)) IS NULL"),
    [[true]],
  );
  // An EXPRESSION attribute is computed from the source's columns (Proton function names).
  await ok(
    "CREATE DICTIONARY products_shout (id uint64, name string, shout string EXPRESSION upper(concat(name, '!'))) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'products'))",
  );
  assert.deepEqual(await historical("SELECT dict_get('products_shout', 'shout', to_uint64(2))"), [['PEAR!']]);
  // LIFETIME: rows written later show once the schedule reloads the dictionary.
  await ingest(
    'products',
    ['id', 'name', 'price'],
    [
      [2, 'ripe pear', 2.5],
      [3, 'plum', 3],
    ],
  );
  await eventually(
    "SELECT dict_get('products_dict', 'name', to_uint64(2)), dict_get('products_dict', 'name', to_uint64(3))",
    [['ripe pear', 'plum']],
    'the LIFETIME reload picks up new rows',
  );
  // A dictionary reads like a table of its current content.
  assert.deepEqual(await historical('SELECT id, name FROM products_dict ORDER BY id'), [
    [1, 'green apple'],
    [2, 'ripe pear'],
    [3, 'plum'],
  ]);
  // SHOW DICTIONARIES / SHOW CREATE DICTIONARY
  assert.deepEqual(await historical("SHOW DICTIONARIES LIKE 'products%'"), [
    ['products_dict'],
    ['products_shout'],
  ]);
  const [[statement]] = (await historical('SHOW CREATE DICTIONARY products_dict')) as [[string]];
  assert.match(statement, /^CREATE DICTIONARY products_dict .*SOURCE\(TIMEPLUS\(STREAM 'products'\)\)/);
});

test('a dictionary over a versioned_kv stream sees the latest row per key; a composite key takes a tuple', async () => {
  await ok(
    "CREATE STREAM prices (sku string, region string, amount int32) PRIMARY KEY (sku, region) SETTINGS mode='versioned_kv'",
  );
  await ingest(
    'prices',
    ['sku', 'region', 'amount'],
    [
      ['a', 'eu', 10],
      ['a', 'us', 12],
      ['a', 'eu', 11],
    ],
  );
  await ok(
    "CREATE DICTIONARY prices_dict (sku string, region string, amount int32) PRIMARY KEY sku, region SOURCE(TIMEPLUS(STREAM 'prices'))",
  );
  assert.deepEqual(
    await historical(
      "SELECT dict_get('prices_dict', 'amount', tuple('a', 'eu')), dict_get('prices_dict', 'amount', tuple('a', 'us'))",
    ),
    [[11, 12]],
  );
  // No LIFETIME: loaded once; SYSTEM RELOAD DICTIONARY loads again on demand.
  await ingest('prices', ['sku', 'region', 'amount'], [['a', 'eu', 15]]);
  assert.deepEqual(await historical("SELECT dict_get('prices_dict', 'amount', tuple('a', 'eu'))"), [[11]]);
  await ok('SYSTEM RELOAD DICTIONARY prices_dict');
  assert.deepEqual(await historical("SELECT dict_get('prices_dict', 'amount', tuple('a', 'eu'))"), [[15]]);
});

test('hierarchical dictionaries: dict_get_hierarchy, dict_is_in, dict_get_children, dict_get_descendants', async () => {
  await ok('CREATE STREAM regions (id uint64, parent uint64, name string)');
  await ingest(
    'regions',
    ['id', 'parent', 'name'],
    [
      [1, 0, 'world'],
      [2, 1, 'europe'],
      [3, 2, 'france'],
      [4, 2, 'norway'],
    ],
  );
  await ok(
    "CREATE DICTIONARY regions_dict (id uint64, parent uint64 DEFAULT 0 HIERARCHICAL, name string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'regions')) LAYOUT(HASHED())",
  );
  assert.deepEqual(
    await historical(
      "SELECT dict_get_hierarchy('regions_dict', to_uint64(3)), dict_is_in('regions_dict', to_uint64(3), to_uint64(1)), dict_is_in('regions_dict', to_uint64(1), to_uint64(3)), array_sort(dict_get_children('regions_dict', to_uint64(2))), array_sort(dict_get_descendants('regions_dict', to_uint64(1), 0))",
    ),
    [[[3, 2, 1], 1, 0, [3, 4], [2, 3, 4]]],
  );
});

test('a streaming query enriches each row from the dictionary as it is when the row is processed', async () => {
  await ok('CREATE STREAM colors (id uint64, color string)');
  await ingest('colors', ['id', 'color'], [[1, 'red']]);
  await ok(
    "CREATE DICTIONARY colors_dict (id uint64, color string DEFAULT '?') PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'colors')) LIFETIME(1)",
  );
  await ok('CREATE STREAM orders (order_id int32, color_id uint64)');
  const q = await api.start(
    "SELECT order_id, dict_get('colors_dict', 'color', color_id) AS color FROM orders",
  );
  await ingest(
    'orders',
    ['order_id', 'color_id'],
    [
      [100, 1],
      [101, 2],
    ],
  );
  await q.waitForRows(2);
  assert.deepEqual(q.rows, [
    [100, 'red'],
    [101, '?'],
  ]);
  await ingest('colors', ['id', 'color'], [[2, 'blue']]);
  await eventually("SELECT dict_get('colors_dict', 'color', to_uint64(2))", [['blue']], 'reloaded');
  await ingest('orders', ['order_id', 'color_id'], [[102, 2]]);
  await q.waitForRows(3);
  assert.deepEqual(q.rows[2], [102, 'blue']);
  await q.cancel();
  // Joined as a table: each row meets the dictionary's content when it is processed.
  const joined = await api.start(
    'SELECT o.order_id, c.color FROM orders AS o INNER JOIN colors_dict AS c ON o.color_id = c.id',
  );
  await ingest('orders', ['order_id', 'color_id'], [[110, 2]]);
  await joined.waitForRows(1);
  assert.deepEqual(joined.rows, [[110, 'blue']]);
  await joined.cancel();
  // In an aggregation: groups keyed by the looked-up value.
  const agg = await api.start(
    "SELECT dict_get('colors_dict', 'color', color_id) AS color, count() AS n FROM orders GROUP BY color EMIT PERIODIC 100ms",
  );
  await ingest(
    'orders',
    ['order_id', 'color_id'],
    [
      [103, 1],
      [104, 2],
      [105, 2],
    ],
  );
  let seen: unknown[][] = [];
  for (let n = 1; n < 200 && !seen.some((row) => row[0] === 'blue' && Number(row[1]) === 2); n++)
    seen = await agg.waitForRows(n);
  assert.ok(
    seen.some((row) => row[0] === 'blue' && Number(row[1]) === 2),
    `blue counted twice: ${JSON.stringify(seen)}`,
  );
  await agg.cancel();
  // /sqlanalyze and /format take dict_get too.
  const r = await h().call('POST', '/v1beta2/sqlanalyze', {
    body: { sql: "SELECT order_id, dict_get('colors_dict', 'color', color_id) FROM orders" },
  });
  assert.equal(r.statusCode, 200, r.body);
});

test('a FILE source reads only inside the user files directory', async () => {
  const dir = join(h().dataDir, 'user_files');
  mkdirSync(join(dir, 'ref'), { recursive: true });
  writeFileSync(join(dir, 'ref', 'cities.csv'), '1,Paris\n2,Oslo\n');
  writeFileSync(join(h().dataDir, 'outside.csv'), '1,secret\n');
  await ok(
    "CREATE DICTIONARY cities (id uint64, city string) PRIMARY KEY id SOURCE(FILE(path 'ref/cities.csv' format 'CSV')) LAYOUT(FLAT()) LIFETIME(0)",
  );
  assert.deepEqual(
    await historical(
      "SELECT dict_get('cities', 'city', to_uint64(2)), dict_get('cities', 'city', to_uint64(1))",
    ),
    [['Oslo', 'Paris']],
  );
  // An absolute path inside the directory is fine too.
  await ok(
    `CREATE OR REPLACE DICTIONARY cities (id uint64, city string) PRIMARY KEY id SOURCE(FILE(path '${join(dir, 'ref', 'cities.csv')}' format 'CSV')) LAYOUT(FLAT())`,
  );
  writeFileSync(join(dir, 'ref', 'cities.csv'), '1,Paris\n2,Bergen\n');
  await ok('SYSTEM RELOAD DICTIONARY cities');
  assert.deepEqual(await historical("SELECT dict_get('cities', 'city', to_uint64(2))"), [['Bergen']]);
  // A name with a quote is a name, not SQL.
  writeFileSync(join(dir, "o'brien.csv"), '7,Cork\n');
  await ok(
    "CREATE DICTIONARY quoted (id uint64, city string) PRIMARY KEY id SOURCE(FILE(path 'o\\'brien.csv' format 'CSV'))",
  );
  assert.deepEqual(await historical("SELECT dict_get('quoted', 'city', to_uint64(7))"), [['Cork']]);
  // Outside: ../, an absolute path elsewhere, a link out of the directory.
  symlinkSync(join(h().dataDir, 'outside.csv'), join(dir, 'link.csv'));
  for (const path of ['../outside.csv', join(h().dataDir, 'outside.csv'), '/etc/passwd', 'link.csv']) {
    const r = await ddl(
      `CREATE DICTIONARY escape (id uint64, v string) PRIMARY KEY id SOURCE(FILE(path '${path}' format 'CSV'))`,
    );
    assertError(r, 403, 291, /not inside the user files directory/);
  }
  // A missing file: refused, nothing kept.
  assertError(
    await ddl(
      "CREATE DICTIONARY nofile (id uint64, v string) PRIMARY KEY id SOURCE(FILE(path 'none.csv' format 'CSV'))",
    ),
    400,
    11601,
    /could not load/,
  );
  assert.deepEqual(await historical("SHOW DICTIONARIES LIKE 'escape%'"), []);
  assert.deepEqual(await historical("SHOW DICTIONARIES LIKE 'nofile%'"), []);
});

test('an HTTP source fetches its URL, again on SYSTEM RELOAD DICTIONARY and on its LIFETIME', async () => {
  await ok(
    `CREATE DICTIONARY http_colors (id uint64, color string) PRIMARY KEY id SOURCE(HTTP(url 'http://127.0.0.1:${port}/colors.tsv' format 'TSV')) LAYOUT(HASHED()) LIFETIME(1)`,
  );
  assert.ok(httpHits >= 1);
  assert.deepEqual(await historical("SELECT dict_get('http_colors', 'color', to_uint64(2))"), [['green']]);
  httpBody = '1\tred\n2\tteal\n';
  await eventually(
    "SELECT dict_get('http_colors', 'color', to_uint64(2))",
    [['teal']],
    'the LIFETIME reload fetches again',
  );
  // Credentials reach the server but are never shown back, not even in the engine's metadata.
  await ok(
    `CREATE DICTIONARY http_auth (id uint64, color string) PRIMARY KEY id SOURCE(HTTP(url 'http://127.0.0.1:${port}/c.tsv' format 'TSV' credentials(user 'u' password 'pw-secret-1')))`,
  );
  assert.equal(lastAuth, `Basic ${Buffer.from('u:pw-secret-1').toString('base64')}`);
  // Header values would be shown by the engine's metadata: refused.
  assertError(
    await ddl(
      `CREATE DICTIONARY http_hdr (id uint64, color string) PRIMARY KEY id SOURCE(HTTP(url 'http://127.0.0.1:${port}/c.tsv' format 'TSV' headers(header(name 'X-Token' value 'hdr-secret-2'))))`,
    ),
    400,
    36,
    /headers/,
  );
  const [[shown]] = (await historical('SHOW CREATE DICTIONARY http_auth')) as [[string]];
  const listed = (await h().call('GET', '/v1beta2/dictionaries/http_auth')).body;
  const topo = (await h().call('GET', '/v1beta2/topology')).body;
  const engineMeta = JSON.stringify(
    await historical("SELECT create_table_query FROM system.tables WHERE name = 'http_auth'"),
  );
  for (const text of [shown, listed, topo, engineMeta]) {
    assert.ok(!text.includes('pw-secret-1') && !text.includes('hdr-secret-2'), text);
  }
  assert.match(shown, /password '\*\*\*\*\*\*'/);
  await ok('DROP DICTIONARY http_auth');
  await ok('DROP DICTIONARY http_colors');
  assertError(
    await ddl(
      "CREATE DICTIONARY bad_url (id uint64, v string) PRIMARY KEY id SOURCE(HTTP(url 'file:///etc/passwd' format 'TSV'))",
    ),
    400,
    36,
    /only http and https/,
  );
  // A server that is down: the statement fails with the reason; nothing is kept.
  const down = createServer();
  await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
  const downPort = (down.address() as AddressInfo).port;
  await new Promise<void>((resolve) => down.close(() => resolve()));
  assertError(
    await ddl(
      `CREATE DICTIONARY down_dict (id uint64, v string) PRIMARY KEY id SOURCE(HTTP(url 'http://127.0.0.1:${downPort}/' format 'TSV'))`,
    ),
    400,
    11601,
  );
});

test('bad input: clear 4xx errors with positions', async () => {
  await ok('CREATE STREAM bad_src (id uint64, v string)');
  const cases: [string, number, number, RegExp][] = [
    [
      "CREATE DICTIONARY b1 (id uint64, v string) PRIMARY KEY id SOURCE(MONGODB(host 'x'))",
      400,
      36,
      /unknown source kind MONGODB \(at position 66\)/,
    ],
    [
      "CREATE DICTIONARY b2 (id uint64, v string) SOURCE(TIMEPLUS(STREAM 'bad_src'))",
      400,
      36,
      /PRIMARY KEY is missing/,
    ],
    ['CREATE DICTIONARY b3 (id uint64, v string) PRIMARY KEY id', 400, 36, /SOURCE is missing/],
    [
      "CREATE DICTIONARY b4 (id uint64, nope string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src'))",
      400,
      36,
      /has no column nope/,
    ],
    [
      "CREATE DICTIONARY b5 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'no_such'))",
      404,
      60,
      /no_such/,
    ],
    [
      "CREATE DICTIONARY b6 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src')) LAYOUT(SSD_CACHE(PATH '/tmp/x'))",
      400,
      36,
      /layout SSD_CACHE/,
    ],
    [
      "CREATE DICTIONARY b12 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src')) LAYOUT(CACHE(SIZE_IN_CELLS 10))",
      400,
      36,
      /reads the source at every lookup/,
    ],
    [
      "CREATE DICTIONARY b11 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src')) LAYOUT(IPTRIE())",
      400,
      137,
      /unknown layout IPTRIE \(at position 102\)/,
    ],
    [
      "CREATE DICTIONARY b7 (id uint64, v string) PRIMARY KEY id SOURCE(CLICKHOUSE(QUERY 'SELECT 1'))",
      400,
      36,
      /does not take QUERY/,
    ],
    [
      "CREATE DICTIONARY b9 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src')) SETTINGS(max_memory_usage = 1)",
      400,
      36,
      /setting max_memory_usage/,
    ],
    [
      "CREATE DICTIONARY _tributary.b10 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'default.bad_src'))",
      400,
      36,
      /database _tributary/,
    ],
    ["SELECT dict_get('no_dict', 'v', 1)", 404, 36, /Dictionary no_dict doesn't exist \(at position 17\)/],
    ["SELECT dict_get(concat('a', 'b'), 'v', 1)", 400, 36, /string literal/],
    ['DROP DICTIONARY no_dict', 404, 36, /no_dict/],
    ['SYSTEM RELOAD DICTIONARY no_dict', 404, 36, /no_dict/],
  ];
  for (const [sql, status, code, message] of cases) {
    const r = await ddl(sql);
    assert.ok(r.statusCode !== 500, `${sql}: ${r.body}`);
    assertError(r, status, code, message);
  }
  await ok('DROP DICTIONARY IF EXISTS no_dict');
  await ok("CREATE DICTIONARY b8 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src'))");
  assertError(
    await ddl("CREATE DICTIONARY b8 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src'))"),
    409,
    446,
  );
  await ok(
    "CREATE DICTIONARY IF NOT EXISTS b8 (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'bad_src'))",
  );
  // A dictionary is read-only.
  const insert = await ddl("INSERT INTO b8 (id, v) VALUES (1, 'x')");
  assert.ok(insert.statusCode >= 400 && insert.statusCode < 500, insert.body);
  // The stream a dictionary reads is not dropped (Proton's code for dependents).
  assertError(await ddl('DROP STREAM bad_src'), 409, 630, /dictionaries read it: default.b8/);
  await ok('DROP DICTIONARY b8');
  await ok('DROP STREAM bad_src');
});

test('RENAME of a stream a dictionary reads is refused; DROP DATABASE takes its dictionaries along', async () => {
  await ok('CREATE DATABASE dict_db');
  await ok('CREATE STREAM dict_db.src (id uint64, v string)');
  await ok(
    "CREATE DICTIONARY dict_db.dd (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'src'))",
  );
  assert.deepEqual(await historical('SHOW DICTIONARIES FROM dict_db'), [['dd']]);
  assertError(await ddl('RENAME STREAM dict_db.src TO dict_db.src2'), 409, 630);
  // A stream cannot take a dictionary's name.
  assertError(await ddl('CREATE STREAM dict_db.dd (id uint64)'), 409, 446);
  await ok('DROP DATABASE dict_db');
  assert.deepEqual(await historical('SHOW DICTIONARIES FROM dict_db'), []);
  let r = await h().call('GET', '/v1beta2/dictionaries?db=dict_db');
  assert.deepEqual(r.json(), []);
  await ok('CREATE DATABASE dict_db');
  r = await ddl("SELECT dict_get('dict_db.dd', 'v', to_uint64(1))");
  assertError(r, 404, 36);
});

test('a materialized view enriches rows with dict_get into its target stream', async () => {
  await ok('CREATE STREAM mv_ref (id uint64, label string)');
  await ingest('mv_ref', ['id', 'label'], [[1, 'one']]);
  await ok(
    "CREATE DICTIONARY mv_dict (id uint64, label string DEFAULT '-') PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'mv_ref'))",
  );
  await ok('CREATE STREAM mv_in (id uint64)');
  await ok(
    "CREATE MATERIALIZED VIEW mv_out AS SELECT id, dict_get('mv_dict', 'label', id) AS label FROM mv_in",
  );
  await ingest('mv_in', ['id'], [[1], [2]]);
  await eventually(
    'SELECT id, label FROM table(mv_out) ORDER BY id',
    [
      [1, 'one'],
      [2, '-'],
    ],
    'the view wrote enriched rows',
  );
});

test('REST operations 8-9 and the topology show dictionaries; only writers create them', async () => {
  await ok('CREATE STREAM rest_src (id uint64, v string)');
  await ok(
    "CREATE DICTIONARY rest_dict (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'rest_src')) COMMENT 'for REST'",
  );
  let r = await h().call('GET', '/v1beta2/dictionaries');
  assert.equal(r.statusCode, 200, r.body);
  const list = r.json() as { name: string; query: string; description: string; created_by: unknown }[];
  const mine = list.find((d) => d.name === 'rest_dict');
  assert.ok(mine, r.body);
  assert.equal(mine.description, 'for REST');
  assert.match(mine.query, /^CREATE DICTIONARY rest_dict/);
  assert.ok(mine.created_by);
  r = await h().call('GET', '/v1beta2/dictionaries/rest_dict?db=default');
  assert.equal(r.statusCode, 200, r.body);
  assert.equal((r.json() as { name: string }).name, 'rest_dict');
  assertError(await h().call('GET', '/v1beta2/dictionaries/none'), 404, 36);
  r = await h().call('GET', '/v1beta2/topology');
  const topo = r.json() as {
    nodes: { id: string; type: string }[];
    edges: { source: string; target: string }[];
  };
  assert.ok(topo.nodes.some((n) => n.id === 'dictionary:default.rest_dict' && n.type === 'dictionary'));
  assert.ok(
    topo.edges.some(
      (e) => e.source === 'stream:default.rest_src' && e.target === 'dictionary:default.rest_dict',
    ),
  );
  // A read_only user reads through dictionaries but creates none.
  r = await h().call('POST', '/v1beta2/users', {
    body: { username: 'dict_reader', password: 'dict-reader-pw', role: 'read_only' },
  });
  assert.equal(r.statusCode, 201, r.body);
  const reader = { user: 'dict_reader', password: 'dict-reader-pw' };
  r = await h().call('POST', '/v1beta2/queries', {
    as: reader,
    body: {
      sql: "CREATE DICTIONARY ro (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'rest_src'))",
    },
  });
  assert.equal(r.statusCode, 403, r.body);
  r = await h().call('POST', '/v1beta2/exec', {
    as: reader,
    body: { sql: "SELECT dict_has('rest_dict', to_uint64(1))", type: 'historical' },
  });
  assert.equal(r.statusCode, 200, r.body);
  assertError(await h().call('DELETE', '/v1beta2/dictionaries/rest_dict', { as: reader }), 403, 10003);
  r = await h().call('DELETE', '/v1beta2/dictionaries/rest_dict');
  assert.equal(r.statusCode, 204, r.body);
});

test('dict_get reaches only Tributary dictionaries, never one the engine holds for itself', async () => {
  // A dictionary made in the engine behind Tributary's back (as an attacker would want one).
  await h().trb.services.engine.query(
    "CREATE DICTIONARY default.engine_only (k UInt64, v String) PRIMARY KEY k SOURCE(CLICKHOUSE(QUERY 'SELECT 1 AS k, \\'secret\\' AS v')) LAYOUT(FLAT()) LIFETIME(0)",
  );
  for (const sql of [
    "SELECT dict_get('engine_only', 'v', to_uint64(1))",
    "SELECT dict_get('default.engine_only', 'v', to_uint64(1))",
    "SELECT dictGet('engine_only', 'v', to_uint64(1))",
    "SELECT * FROM dictionary('engine_only')",
    'SELECT * FROM engine_only',
  ]) {
    const r = await ddl(sql);
    assert.ok(r.statusCode === 404 || r.statusCode === 403, `${sql}: ${r.statusCode} ${r.body}`);
    assert.ok(!r.body.includes('secret'), r.body);
  }
});

test('dictionaries survive a restart and keep refreshing', async () => {
  await ok('CREATE STREAM durable_src (id uint64, v string)');
  await ingest('durable_src', ['id', 'v'], [[1, 'before']]);
  await ok(
    "CREATE DICTIONARY durable_dict (id uint64, v string) PRIMARY KEY id SOURCE(TIMEPLUS(STREAM 'durable_src')) LIFETIME(1)",
  );
  const h2 = await api.h.restart();
  api = await StreamingApi.attach(h2);
  assert.deepEqual(await historical("SELECT dict_get('durable_dict', 'v', to_uint64(1))"), [['before']]);
  assert.deepEqual(await historical("SHOW DICTIONARIES LIKE 'durable%'"), [['durable_dict']]);
  await ingest('durable_src', ['id', 'v'], [[1, 'after']]);
  await eventually(
    "SELECT dict_get('durable_dict', 'v', to_uint64(1))",
    [['after']],
    'reloads after restart',
  );
  assertError(await ddl('DROP STREAM durable_src'), 409, 630);
});
