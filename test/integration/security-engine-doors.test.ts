/**
 * What user SQL may reach in the engine (docs/operations.md, "What user SQL may reach"): every
 * door to files, the network, other servers, programs, secret system tables and limit settings is
 * refused, for every role and credential kind, through every route that runs SQL; no secret comes
 * back and the server fetches nothing. A second test shows the engine's own guard (readonly = 1
 * on user SQL) refuses the same doors when the translator is bypassed.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Engine } from '../../src/engine/engine.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import { ADMIN, type Credentials, type Harness, startHarness } from '../helpers/harness.ts';

const SECRET = 'TOP-SECRET-7f3a9c';

let h: Harness;
let server: Server;
let hits = 0;
let port = 0;
let secretFile = '';
const who: Record<string, Credentials> = {};

before(async () => {
  h = await startHarness();
  secretFile = join(h.dataDir, 'probe-secret.txt');
  writeFileSync(secretFile, `${SECRET}\n`);
  server = createServer((_req, res) => {
    hits++;
    res.end(SECRET);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  let r = await h.call('POST', '/v1beta2/users', {
    body: { username: 'reader', password: 'reader-password', role: 'read_only' },
  });
  assert.equal(r.statusCode, 201, r.body);
  r = await h.call('POST', '/v1beta2/queries', { body: { sql: 'CREATE STREAM s (a int64, b string)' } });
  assert.equal(r.statusCode, 204, r.body);
  who.admin = ADMIN;
  who.reader = { user: 'reader', password: 'reader-password' };
  for (const username of ['admin', 'reader']) {
    r = await h.call('POST', '/v1beta2/auth/api_keys', { body: { name: `k-${username}`, username } });
    assert.equal(r.statusCode, 201, r.body);
    who[`${username} API key`] = { apiKey: (r.json() as { key: string }).key };
  }
});

after(async () => {
  server.close();
  await h.close();
});

/** SQL that reads through a door, and the codes that may refuse it. */
function doors(): { sql: string; codes: number[] }[] {
  const f = `'${secretFile}'`;
  const u = `'http://127.0.0.1:${port}/x'`;
  const denied = [497];
  const list: [string, number[]][] = [
    [`SELECT * FROM file(${f}, 'LineAsString')`, denied],
    [`SELECT * FROM file('${join(h.dataDir, 'initial-admin-password')}', 'LineAsString')`, denied],
    [`SELECT * FROM file('${h.dataDir}/**', 'RawBLOB')`, denied],
    ["SELECT * FROM file('/etc/passwd', 'LineAsString')", denied],
    [`SELECT * FROM url(${u}, 'LineAsString')`, denied],
    [`SELECT file(${f})`, denied],
    [`SELECT length(file(${f})) AS n`, denied],
    [`SELECT * FROM s3(${u}, 'LineAsString')`, denied],
    ["SELECT * FROM remote('127.0.0.1:9000', system.one)", denied],
    ["SELECT * FROM remoteSecure('127.0.0.1:9440', system.one)", denied],
    ["SELECT * FROM cluster('default', system.one)", denied],
    ["SELECT * FROM clusterAllReplicas('default', system.one)", denied],
    ["SELECT * FROM executable('cat /etc/passwd', 'LineAsString', 'x string')", denied],
    ["SELECT * FROM input('x string')", denied],
    ["SELECT * FROM mysql('127.0.0.1:3306', 'd', 't', 'u', 'p')", denied],
    ["SELECT * FROM postgresql('127.0.0.1:5432', 'd', 't', 'u', 'p')", denied],
    ["SELECT * FROM jdbc('jdbc:x', 't')", denied],
    ["SELECT * FROM odbc('dsn', 't')", denied],
    [`SELECT * FROM hdfs('hdfs://127.0.0.1:${port}/x', 'LineAsString')`, denied],
    [`SELECT * FROM sqlite(${f}, 't')`, denied],
    ["SELECT * FROM mongodb('127.0.0.1:27017', 'd', 'c', 'u', 'p', 'x string')", denied],
    ["SELECT * FROM redis('127.0.0.1:6379', 'k', 'k string')", denied],
    [`SELECT * FROM azureBlobStorage(${u}, 'c', 'b')`, denied],
    [`SELECT * FROM iceberg(${u})`, denied],
    [`SELECT * FROM deltaLake(${u})`, denied],
    [`SELECT * FROM hudi(${u})`, denied],
    [`SELECT * FROM urlCluster('default', ${u}, 'LineAsString')`, denied],
    [`SELECT * FROM fileCluster('default', ${f}, 'LineAsString')`, denied],
    ["SELECT * FROM dictionary('d')", denied],
    // dict_get* reach only Tributary's own dictionaries (CREATE DICTIONARY): any other name is
    // unknown (36) to user SQL, whatever the engine holds (dictionaries.test.ts).
    ["SELECT dictGet('d', 'a', 1)", [...denied, 36]],
    ["SELECT dict_get_string('d', 'a', 1)", [...denied, 36]],
    ["SELECT * FROM filesystem('/etc')", denied],
    // `format` is a keyword to the parser: refused as a syntax error before any translation.
    ["SELECT * FROM format(JSONEachRow, 'x')", [497, 62]],
    ["SELECT getServerSetting('path')", denied],
    ['SELECT name FROM system.users', denied],
    ['SELECT * FROM system.grants', denied],
    ['SELECT * FROM system.server_settings', denied],
    ['SELECT path FROM system.disks', denied],
    ['SELECT * FROM system.query_log', denied],
    ['SELECT 1 SETTINGS readonly = 0', [164]],
    // A limit may only be lowered (a positive value no higher than the server's): 0 lifts it.
    ['SELECT 1 SETTINGS max_memory_usage = 0', [164]],
    ['SELECT 1 SETTINGS max_ast_depth = 100000', [164]],
    ['SELECT 1 SETTINGS allow_ddl = 1', [164]],
    ['SELECT 1 SETTINGS max_bytes_before_external_sort = 1', [164]],
    ['SELECT 1 SETTINGS max_execution_time = 100000', [164]],
    ['SELECT 1 SETTINGS allow_introspection_functions = 1', [164]],
    ["SELECT 1 SETTINGS user_files_path = '/'", [164]],
    [`SELECT * FROM (SELECT * FROM file(${f}, 'LineAsString') SETTINGS readonly = 0)`, [164, 497]],
    [`SELECT * FROM table(s) WHERE b IN (SELECT line FROM file(${f}, 'LineAsString'))`, denied],
    [`WITH x AS (SELECT * FROM url(${u}, 'LineAsString')) SELECT * FROM x`, denied],
    [`SELECT * FROM table(s) UNION ALL SELECT 1, line FROM file(${f}, 'LineAsString')`, denied],
  ];
  return list.map(([sql, codes]) => ({ sql, codes }));
}

function assertRefused(r: { statusCode: number; body: string }, codes: number[], label: string): void {
  assert.ok(r.statusCode >= 400 && r.statusCode < 500, `${label}: ${r.statusCode} ${r.body}`);
  const body = JSON.parse(r.body) as { code: number; message: string };
  assert.ok(codes.includes(body.code), `${label}: code ${body.code} not in ${codes}: ${r.body}`);
  assert.ok(!r.body.includes(SECRET), `${label}: the secret leaked: ${r.body}`);
  assert.ok(!r.body.includes('root:x:0:0'), `${label}: /etc/passwd leaked`);
}

test('every engine door is refused for every role and credential, through /exec, /queries and /sqlanalyze', async () => {
  for (const { sql, codes } of doors()) {
    for (const [name, as] of Object.entries(who)) {
      const exec = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' }, as });
      assertRefused(exec, codes, `/exec as ${name}: ${sql}`);
      const query = await h.call('POST', '/v1beta2/queries', { body: { sql }, as });
      assertRefused(query, codes, `/queries as ${name}: ${sql}`);
    }
    const analyze = await h.call('POST', '/v1beta2/sqlanalyze', { body: { sql }, as: who.reader });
    assertRefused(analyze, codes, `/sqlanalyze: ${sql}`);
  }
  assert.equal(hits, 0, 'the server fetched a URL');
});

test('the refusal names the door and its SQL position', async () => {
  const r = await h.call('POST', '/v1beta2/exec', {
    body: {
      sql: `SELECT a FROM table(s) WHERE b IN (SELECT line FROM file('${secretFile}', 'LineAsString'))`,
      type: 'historical',
    },
    as: who.reader,
  });
  assert.equal(r.statusCode, 403, r.body);
  assert.match(r.json().message, /table function file \(at position 53\)/);
  const s = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SELECT 1 SETTINGS max_threads = 1, max_memory_usage = 0', type: 'historical' },
  });
  assert.equal(s.json().code, 164, s.body);
  assert.match(s.json().message, /Setting max_memory_usage \(at position 36\)/);
});

test('streaming queries are refused too (a door inside a streaming subquery, a window or a join)', async () => {
  const f = `'${secretFile}'`;
  for (const sql of [
    `SELECT * FROM s WHERE b IN (SELECT line FROM file(${f}, 'LineAsString'))`,
    `SELECT a, (SELECT any(line) FROM file(${f}, 'LineAsString')) AS x FROM s`,
    `SELECT count() FROM tumble(s, 1s) GROUP BY window_start HAVING count() > length(file(${f}))`,
    `SELECT * FROM s JOIN url('http://127.0.0.1:${port}/y', 'LineAsString') AS u ON s.b = u.line`,
    'SELECT * FROM s SETTINGS max_memory_usage = 0',
  ]) {
    for (const [name, as] of Object.entries(who)) {
      const r = await h.call('POST', '/v1beta2/queries', { body: { sql }, as });
      assertRefused(r, [497, 164], `/queries streaming as ${name}: ${sql}`);
    }
  }
  assert.equal(hits, 0);
});

test('INSERT INTO FUNCTION is refused (admin: the door; read_only: the statement)', async () => {
  const sql = `INSERT INTO FUNCTION file('${join(h.dataDir, 'written.txt')}', 'LineAsString') SELECT 'x'`;
  let r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'ddl' } });
  // The door is refused (497) or the statement form is not supported at all (48).
  assertRefused(r, [497, 48], 'admin');
  r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'ddl' }, as: who.reader });
  assertRefused(r, [10003], 'reader');
  r = await h.call('POST', '/v1beta2/queries', {
    body: { sql: `SELECT 1 INTO OUTFILE '${join(h.dataDir, 'o.txt')}'` },
  });
  assert.equal(r.statusCode, 400, r.body);
});

test('what the allow-list keeps still runs (generators, Proton table functions, metadata, harmless settings)', async () => {
  for (const sql of [
    'SELECT count() FROM numbers(10)',
    "SELECT a FROM generate_random('a Int8') LIMIT 3",
    'SELECT count() FROM table(s)',
    'SELECT count() FROM tumble(table(s), 1s) GROUP BY window_start',
    'SELECT count() > 0 FROM system.processes',
    "SELECT name FROM system.tables WHERE database = 'default' AND name = 's'",
    "SELECT count() FROM numbers(10) SETTINGS max_threads = 1, join_algorithm = 'hash'",
    "SELECT 1 SETTINGS seek_to = 'earliest'",
    "SELECT 'a SETTINGS b' AS s",
    "SELECT 'x' AS s SETTINGS max_threads = 2",
    'SELECT count() FROM numbers(10) SETTINGS max_rows_to_read = 100, optimize_read_in_order = 0',
  ]) {
    const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' }, as: who.reader });
    assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  }
});

test('the engine alone refuses the doors on user SQL (readonly = 1), whatever the translator lets through', async () => {
  const engine = (h.trb as unknown as { services: { engine: Engine } }).services.engine;
  const run = async (sql: string, userSql: boolean): Promise<string | number> => {
    try {
      const r = await engine.query(sql, { format: 'TSV', lane: 'user', userSql });
      return r.text();
    } catch (e) {
      assert.ok(isTributaryError(e), String(e));
      return e.code;
    }
  };
  const file = `SELECT * FROM file('${secretFile}', 'LineAsString')`;
  // Without the guard the engine reads the file: the test below can fail.
  assert.equal(String(await run(file, false)).trim(), SECRET);
  assert.equal(await run(file, true), 164);
  assert.equal(await run(`SELECT * FROM url('http://127.0.0.1:${port}/e', 'LineAsString')`, true), 164);
  assert.equal(await run("SELECT * FROM executable('x', 'LineAsString', 'x String')", true), 164);
  assert.equal(await run("SELECT * FROM remote('127.0.0.1:1', system.one)", true), 164);
  assert.equal(await run(`SELECT * FROM sqlite('${secretFile}', 't')`, true), 164);
  // The streaming executor's reading steps are guarded the same way.
  assert.equal(hits, 0);
  // What the engine guard does not stop (the translator's allow-list does): documented limits.
  assert.equal(String(await run(`SELECT file('${secretFile}')`, true)).includes(SECRET), true);
});
