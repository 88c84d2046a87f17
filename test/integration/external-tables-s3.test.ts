/**
 * External tables of type s3 against a real S3-compatible server (s3rver, started here on a
 * random port): CREATE/SHOW/DROP, SELECT with globs and virtual columns, INSERT ... VALUES and
 * INSERT ... SELECT writing new objects named by the write_to template, PARTITION BY, and
 * objects read back with the official AWS SDK client, independently of Tributary.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { type LocalS3, S3_KEY, S3_SECRET, startLocalS3 } from '../helpers/s3-server.ts';

let h: Harness;
let s3: LocalS3;
before(async () => {
  s3 = await startLocalS3();
  h = await startHarness();
});
after(async () => {
  await h.close();
  await s3.close();
});

async function exec(sql: string): Promise<void> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
}

async function fails(sql: string): Promise<{ status: number; code: number; message: string }> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.ok(r.statusCode >= 400, `${sql} should fail: ${r.statusCode} ${r.body}`);
  const body = r.json() as { code: number; message: string };
  return { status: r.statusCode, code: body.code, message: body.message };
}

/** Rows of a historical query. */
async function rows(sql: string): Promise<unknown[][]> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  const out: unknown[][] = [];
  for (const block of r.body.split('\n\n')) {
    const lines = block.split('\n');
    const data = lines
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (!data || lines.some((l) => l.startsWith('event: '))) continue;
    out.push(...(JSON.parse(data) as unknown[][]));
  }
  return out;
}

const creds = () =>
  `endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${S3_SECRET}'`;

test('INSERT writes new objects named by write_to with a timestamp index; SELECT reads them all', async () => {
  await exec(
    `CREATE EXTERNAL TABLE logs (id int32, level string, msg string) SETTINGS type='s3', ${creds()}, write_to='logs/part.jsonl.gz'`,
  );
  await exec(`INSERT INTO logs VALUES (1, 'info', 'a'), (2, 'warn', 'b')`);
  await exec('CREATE STREAM src (id int32, level string, msg string)');
  await exec(`INSERT INTO src (id, level, msg) VALUES (3, 'info', 'c'), (4, 'error', 'd'), (5, 'info', 'e')`);
  await exec('INSERT INTO logs SELECT id, level, msg FROM table(src)');
  const keys = await s3.keys('logs/');
  assert.equal(keys.length, 2, keys.join(','));
  for (const k of keys) assert.match(k, /^logs\/part\.\d{17}\.jsonl\.gz$/);
  // Independent read: gzip, JSON lines with the declared columns.
  const first = gunzipSync(await s3.get(keys[0] as string))
    .toString()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(first, [
    { id: 1, level: 'info', msg: 'a' },
    { id: 2, level: 'warn', msg: 'b' },
  ]);
  assert.deepEqual(await rows('SELECT count(), sum(id) FROM logs'), [[5, 15]]);
  const files = await rows('SELECT DISTINCT _file, _path FROM logs ORDER BY _file');
  assert.deepEqual(
    files,
    keys.map((k) => [k.slice('logs/'.length), `${s3.bucket}/${k}`]),
  );
  // Any SQL on top, and a join with a stream's stored rows.
  assert.deepEqual(
    await rows(
      'SELECT l.level, count() FROM logs AS l INNER JOIN table(src) AS s ON l.id = s.id GROUP BY l.level ORDER BY l.level',
    ),
    [
      ['error', 1],
      ['info', 2],
    ],
  );
});

test('PARTITION BY fills {_partition_id}: one object per partition value', async () => {
  await exec(
    `CREATE EXTERNAL TABLE plogs (level string, n int32) PARTITION BY level SETTINGS type='s3', ${creds()}, write_to='plogs/{_partition_id}/data.csv', data_format='CSV'`,
  );
  await exec(`INSERT INTO plogs VALUES ('info', 1), ('warn', 2), ('info', 3)`);
  const keys = await s3.keys('plogs/');
  assert.equal(keys.length, 2, keys.join(','));
  assert.match(keys[0] as string, /^plogs\/info\/data\.\d{17}\.csv$/);
  assert.match(keys[1] as string, /^plogs\/warn\/data\.\d{17}\.csv$/);
  assert.equal((await s3.get(keys[0] as string)).toString(), '"info",1\n"info",3\n');
  // read_from defaults to the template's pattern: every partition, every index.
  assert.deepEqual(await rows('SELECT level, sum(n) FROM plogs GROUP BY level ORDER BY level'), [
    ['info', 4],
    ['warn', 2],
  ]);
});

test('read_from globs: *, **, ?, {a,b} and {N..M} with leading zeroes', async () => {
  for (const k of [
    'g/a01.csv',
    'g/a02.csv',
    'g/a03.csv',
    'g/a10.csv',
    'g/b1.csv',
    'g/sub/a01.csv',
    'g/sub/deep/c.csv',
  ])
    await s3.put(k, `${k}\n`);
  const read = async (pattern: string) => {
    await exec(
      `CREATE OR REPLACE EXTERNAL TABLE globs (k string) SETTINGS type='s3', ${creds()}, read_from='${pattern}', data_format='CSV'`,
    );
    return (await rows('SELECT k FROM globs ORDER BY k')).map((r) => r[0]);
  };
  assert.deepEqual(await read('g/*.csv'), ['g/a01.csv', 'g/a02.csv', 'g/a03.csv', 'g/a10.csv', 'g/b1.csv']);
  assert.deepEqual((await read('g/**.csv')).length, 7);
  assert.deepEqual(await read('g/a0?.csv'), ['g/a01.csv', 'g/a02.csv', 'g/a03.csv']);
  assert.deepEqual(await read('g/{a10,b1}.csv'), ['g/a10.csv', 'g/b1.csv']);
  assert.deepEqual(await read('g/a{01..02}.csv'), ['g/a01.csv', 'g/a02.csv']);
  assert.deepEqual(await read('g/*/a01.csv'), ['g/sub/a01.csv']);
  const bad = await fails(
    `CREATE EXTERNAL TABLE badglob (k string) SETTINGS type='s3', ${creds()}, read_from='g/{1..x}.csv', data_format='CSV'`,
  );
  assert.equal(bad.status, 400);
  assert.match(bad.message, /setting read_from has a malformed range/);
});

test('a table with only read_from refuses INSERT', async () => {
  await exec(
    `CREATE EXTERNAL TABLE ro (k string) SETTINGS type='s3', ${creds()}, read_from='g/*.csv', data_format='CSV'`,
  );
  const e = await fails(`INSERT INTO ro VALUES ('x')`);
  assert.equal(e.status, 400);
  assert.equal(e.code, 11204);
  assert.match(e.message, /read-only/);
});

test('bad settings are 400s naming the setting', async () => {
  const cases: [string, number, RegExp][] = [
    [
      `type='s3', ${creds()}, write_to='x.json', regoin='x'`,
      11203,
      /unknown setting regoin \(did you mean region\?\)/,
    ],
    [`type='s3', write_to='x.json'`, 11201, /setting region is required when endpoint is not given/],
    [`type='kafka', ${creds()}, write_to='x.json'`, 11202, /setting type must be 's3'/],
    [`type='s3', ${creds()}`, 11201, /setting read_from is required/],
    [
      `type='s3', ${creds()}, write_to='x.json', data_format='Parquet2'`,
      11202,
      /setting data_format must be one of/,
    ],
    [
      `type='s3', ${creds()}, write_to='x.json', compression_method='zip'`,
      11202,
      /setting compression_method must be one of/,
    ],
    [`type='s3', endpoint='ftp://h/b', write_to='x.json'`, 11202, /setting endpoint must use http/],
    [`type='s3', ${creds()}, write_to='x/*.json'`, 11202, /setting write_to is a key template/],
    [
      `type='s3', ${creds()}, write_to='x.json', s3_max_get_rps=-1`,
      11202,
      /setting s3_max_get_rps must be a non-negative integer/,
    ],
    [
      `type='s3', ${creds()}, write_to='x.pb', data_format='Protobuf'`,
      11201,
      /setting format_schema is required/,
    ],
  ];
  for (const [settings, code, message] of cases) {
    const e = await fails(`CREATE EXTERNAL TABLE bad (a string) SETTINGS ${settings}`);
    assert.equal(e.status, 400, settings);
    assert.equal(e.code, code, `${settings}: ${e.message}`);
    assert.match(e.message, message);
  }
  assert.deepEqual(await rows("SHOW EXTERNAL TABLES LIKE 'bad%'"), []);
});

test('SHOW CREATE masks the secret; SHOW EXTERNAL TABLES lists; DROP removes the table, not the objects', async () => {
  const secret = 'top-secret-value-42';
  await exec(
    `CREATE EXTERNAL TABLE masked (a string) SETTINGS type='s3', endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${secret}', write_to='m/x.csv', data_format='CSV'`,
  );
  await exec(`INSERT INTO masked VALUES ('v')`);
  const [[statement]] = (await rows('SHOW CREATE EXTERNAL TABLE masked')) as [[string]];
  assert.ok(!statement.includes(secret), statement);
  assert.match(statement, /secret_access_key = '\*\*\*\*\*\*'/);
  assert.match(statement, /write_to = 'm\/x\.csv'/);
  // The engine's metadata is no way around it either.
  const meta = await h.call('POST', '/v1beta2/queries', {
    body: { sql: "SELECT create_table_query FROM system.tables WHERE name LIKE '%masked%'" },
  });
  assert.ok(!meta.body.includes(secret));
  assert.deepEqual(
    (await rows('SHOW EXTERNAL TABLES')).map((r) => r[0]).filter((n) => n === 'masked'),
    ['masked'],
  );
  await exec('DROP EXTERNAL TABLE masked');
  assert.equal((await fails('SELECT * FROM masked')).status, 404);
  assert.equal((await s3.keys('m/')).length, 1);
  await exec('DROP EXTERNAL TABLE IF EXISTS masked');
  // DROP STREAM of an external table's name drops it, as Proton does.
  await exec(
    `CREATE EXTERNAL TABLE dropme (a string) SETTINGS type='s3', ${creds()}, read_from='m/*.csv', data_format='CSV'`,
  );
  await exec('DROP STREAM dropme');
  assert.deepEqual(await rows("SHOW EXTERNAL TABLES LIKE 'dropme'"), []);
});

test('an unreachable endpoint fails INSERT and SELECT promptly with the engine code, never hangs', async () => {
  await exec(
    `CREATE EXTERNAL TABLE down (a string) SETTINGS type='s3', endpoint='http://127.0.0.1:1/bkt', access_key_id='k', secret_access_key='down-secret', write_to='x/d.csv', data_format='CSV'`,
  );
  const insert = await fails(`INSERT INTO down VALUES ('a')`);
  assert.equal(insert.code, 499);
  assert.match(insert.message, /Connection refused/);
  const select = await h.call('POST', '/v1beta2/queries', { body: { sql: 'SELECT count() FROM down' } });
  assert.match(select.body, /"status":"failed".*Connection refused/);
  assert.ok(!select.body.includes('down-secret') && !insert.message.includes('down-secret'));
});

test('user SQL still cannot name the engine tables external tables read through', async () => {
  const e = await fails('SELECT * FROM `_tributary_external`.`default.logs`');
  assert.ok(e.status === 404 || e.status === 403, `${e.status} ${e.message}`);
});

test('REST: list, get (create_query, settings, secret masked), delete; topology node; schemas', async () => {
  const secret = 'rest-secret-77';
  await exec(
    `CREATE EXTERNAL TABLE rest_t (a string) SETTINGS type='s3', endpoint='${s3.endpoint}/${s3.bucket}', access_key_id='${S3_KEY}', secret_access_key='${secret}', write_to='rest/x.csv', data_format='CSV' COMMENT 'for REST'`,
  );
  const list = await h.call('GET', '/v1beta2/external_tables');
  assert.equal(list.statusCode, 200);
  assert.ok(!list.body.includes(secret));
  const names = (list.json() as { name: string }[]).map((t) => t.name);
  assert.ok(names.includes('rest_t'), names.join(','));
  const one = await h.call('GET', '/v1beta2/external_tables/rest_t');
  assert.equal(one.statusCode, 200);
  assert.ok(!one.body.includes(secret));
  const t = one.json() as {
    name: string;
    type: string;
    description: string;
    create_query: string;
    settings: { key: string; value: string }[];
    created_by: { name: string };
  };
  assert.equal(t.type, 's3');
  assert.equal(t.description, 'for REST');
  assert.match(
    t.create_query,
    /^CREATE EXTERNAL TABLE `default`.`rest_t` \(`a` string\) SETTINGS type = 's3'/,
  );
  assert.deepEqual(
    t.settings.find((x) => x.key === 'secret_access_key'),
    { key: 'secret_access_key', value: '******' },
  );
  assert.deepEqual(
    t.settings.find((x) => x.key === 'write_to'),
    { key: 'write_to', value: 'rest/x.csv' },
  );
  assert.equal(t.created_by.name, 'admin');
  const topo = (await h.call('GET', '/v1beta2/topology')).json() as { nodes: { id: string; type: string }[] };
  assert.ok(topo.nodes.some((n) => n.id === 'external_table:default.rest_t' && n.type === 'external_table'));
  assert.equal((await h.call('DELETE', '/v1beta2/external_tables/rest_t')).statusCode, 204);
  assert.equal((await h.call('GET', '/v1beta2/external_tables/rest_t')).statusCode, 404);
  assert.equal((await h.call('DELETE', '/v1beta2/external_tables/rest_t')).statusCode, 404);
  // Format schemas (operations 47-48).
  await exec(`CREATE FORMAT SCHEMA rest_s AS 'syntax = "proto3"; message M { int32 a = 1; }' TYPE Protobuf`);
  const schemas = (await h.call('GET', '/v1beta2/schemas')).json() as { name: string; type: string }[];
  assert.deepEqual(
    schemas.map((x) => [x.name, x.type]),
    [['rest_s', 'Protobuf']],
  );
  const schema = (await h.call('GET', '/v1beta2/schemas/rest_s')).json() as { content: string };
  assert.match(schema.content, /message M/);
  assert.equal((await h.call('DELETE', '/v1beta2/schemas/rest_s')).statusCode, 204);
  assert.equal((await h.call('GET', '/v1beta2/schemas/rest_s')).statusCode, 404);
});

test('one namespace: a stream or external stream cannot take an external table name; views reading it are linked in the topology', async () => {
  await exec(`CREATE EXTERNAL TABLE ns_t (n int32) SETTINGS type='s3', ${creds()}, write_to='ns/x.csv'`);
  const stream = await fails('CREATE STREAM ns_t (n int32)');
  assert.equal(stream.status, 409);
  assert.equal(stream.code, 57);
  const external = await fails(
    "CREATE EXTERNAL STREAM ns_t (n int32) SETTINGS type='http', url='http://127.0.0.1:9/x'",
  );
  assert.equal(external.status, 409);
  await exec("CREATE EXTERNAL STREAM ns_x (n int32) SETTINGS type='http', url='http://127.0.0.1:9/x'");
  const reverse = await fails(
    `CREATE EXTERNAL TABLE ns_x (n int32) SETTINGS type='s3', ${creds()}, write_to='ns/y.csv'`,
  );
  assert.equal(reverse.status, 409);
  await exec('CREATE VIEW ns_v AS SELECT n * 2 AS m FROM ns_t');
  await exec('CREATE STREAM ns_s (n int32)');
  await exec('CREATE MATERIALIZED VIEW ns_mv INTO ns_t AS SELECT n FROM ns_s');
  const topo = (await h.call('GET', '/v1beta2/topology')).json() as {
    edges: { source: string; target: string }[];
  };
  const has = (source: string, target: string) =>
    topo.edges.some((e) => e.source === source && e.target === target);
  assert.ok(has('external_table:default.ns_t', 'view:default.ns_v'), JSON.stringify(topo.edges));
  assert.ok(
    has('materialized_view:default.ns_mv', 'external_table:default.ns_t'),
    JSON.stringify(topo.edges),
  );
  await exec('DROP VIEW ns_mv');
  await exec('DROP VIEW ns_v');
});

test('external tables survive a restart', async () => {
  h = await h.restart();
  assert.deepEqual(await rows('SELECT count() FROM logs'), [[5]]);
  const [[statement]] = (await rows('SHOW CREATE EXTERNAL TABLE plogs')) as [[string]];
  assert.match(statement, /PARTITION BY level/);
  await exec(`INSERT INTO logs VALUES (6, 'info', 'f')`);
  assert.deepEqual(await rows('SELECT count() FROM logs'), [[6]]);
});
