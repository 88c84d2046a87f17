/**
 * The translator's half of the engine allow-list (src/sql/translator/engine-allow-list.ts): table
 * functions and system tables are allow-listed, file/network/server functions deny-listed, query
 * settings allow-listed; a refusal names the item and its SQL position. No engine needed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TABLE_FUNCTIONS } from '../../src/sql/names/clickhouse-functions.generated.ts';
import { ALLOWED_TABLE_FUNCTIONS, isDeniedFunction } from '../../src/sql/translator/engine-allow-list.ts';
import type { TableResolver } from '../../src/sql/translator/resolver.ts';
import { translate } from '../../src/sql/translator/translate.ts';
import { translateRefusal } from '../helpers/translate-refusal.ts';

const resolver: TableResolver = {
  resolve: (db, name) => {
    if (db === 'system' || db === 'information_schema')
      return { kind: 'engine_table', database: db, name, engineSql: `${db}.${name}` };
    if (db === undefined && name === 's')
      return {
        kind: 'stream',
        name: 's',
        engineSql: '`default`.`s`',
        columns: [{ name: 'a', type: 'int64' }],
      };
    return undefined;
  },
};

const refusal = (sql: string) => translateRefusal(sql, resolver);

test('every engine table function outside the short allow-list is refused (497, 403)', () => {
  for (const name of TABLE_FUNCTIONS) {
    const sql = `SELECT * FROM ${name}('x')`;
    if (['format', 'values'].includes(name.toLowerCase())) continue; // keywords to the parser
    if (ALLOWED_TABLE_FUNCTIONS.has(name)) {
      assert.doesNotThrow(() => translate(sql, { resolver }), sql);
      continue;
    }
    let r: { code: number; status: number; message: string };
    try {
      r = refusal(sql);
    } catch (e) {
      // A name the parser reads as a keyword fails earlier, as a syntax error: also closed.
      assert.match(String(e), /was translated|Syntax/, sql);
      continue;
    }
    assert.equal(r.code, 497, `${sql}: ${r.message}`);
    assert.equal(r.status, 403);
    assert.match(r.message, new RegExp(`table function ${name} \\(at position 15\\)`));
  }
});

test('Proton table functions and generators stay open', () => {
  for (const sql of [
    'SELECT * FROM table(s)',
    'SELECT * FROM tumble(s, 1s)',
    'SELECT * FROM hop(s, 1s, 2s)',
    'SELECT * FROM dedup(s, a)',
    'SELECT * FROM numbers(3)',
    "SELECT * FROM generate_random('a Int8')",
    'SELECT * FROM generate_series(1, 3)',
  ]) {
    assert.doesNotThrow(() => translate(sql, { resolver }), sql);
  }
});

test('doors anywhere in the statement are refused: subqueries, CTEs, IN, joins, unions, INSERT ... SELECT', () => {
  for (const sql of [
    "SELECT * FROM s WHERE a IN (SELECT 1 FROM file('/etc/passwd', 'LineAsString'))",
    "WITH x AS (SELECT * FROM url('http://h/x', 'LineAsString')) SELECT * FROM x",
    "SELECT * FROM s JOIN remote('h', system.one) AS r ON 1 = 1",
    "SELECT 1 UNION ALL SELECT * FROM s3('http://h/b/k', 'CSV')",
    "SELECT * FROM tumble((SELECT * FROM file('x', 'CSV')), 1s)",
    "INSERT INTO s SELECT * FROM file('x', 'CSV')",
    "INSERT INTO FUNCTION file('x', 'CSV') SELECT 1",
    "SELECT (SELECT file('/etc/passwd'))",
  ]) {
    assert.equal(refusal(sql).code, 497, sql);
  }
});

test('scalar functions that read files or reveal the server are refused, whatever the spelling', () => {
  for (const [sql, name] of [
    ["SELECT file('/etc/passwd')", 'file'],
    ["SELECT get_server_setting('path')", 'get_server_setting'],
    ["SELECT dict_get('d', 'a', 1)", 'dict_get'],
    ["SELECT dictGetString('d', 'a', 1)", 'dictGetString'],
    ["SELECT join_get('j', 'a', 1)", 'join_get'],
    ['SELECT filesystem_capacity()', 'filesystem_capacity'],
  ] as const) {
    const r = refusal(sql);
    assert.equal(r.code, 497, sql);
    assert.match(r.message, new RegExp(`function ${name} \\(at position 8\\)`), r.message);
  }
  assert.ok(isDeniedFunction('dictGetUInt64OrDefault'));
  assert.ok(!isDeniedFunction('plus'));
  assert.ok(!isDeniedFunction('getSetting'));
});

test('system tables: metadata and processes open; users, grants, server settings, disks closed', () => {
  for (const t of ['processes', 'tables', 'columns', 'databases', 'functions', 'one']) {
    assert.doesNotThrow(() => translate(`SELECT * FROM system.${t}`, { resolver }), t);
  }
  assert.doesNotThrow(() => translate('SELECT * FROM information_schema.tables', { resolver }));
  for (const t of [
    'users',
    'grants',
    'roles',
    'server_settings',
    'disks',
    'query_log',
    'settings_profiles',
  ]) {
    const r = refusal(`SELECT * FROM system.${t}`);
    assert.equal(r.code, 497, t);
    assert.match(r.message, new RegExp(`table system\\.${t} \\(at position 15\\)`));
  }
});

test('query settings: Proton and harmless engine settings pass; lifted limits, readonly, allow_* and unknown ones are refused (164)', () => {
  for (const sql of [
    "SELECT * FROM s SETTINGS seek_to = 'earliest', max_threads = 2, join_algorithm = 'hash'",
    'SELECT * FROM s SETTINGS output_format_pretty_max_rows = 5, eps = 10',
    'SELECT * FROM s SETTINGS max_rows_to_read = 10, max_memory_usage = 1000000',
  ]) {
    assert.doesNotThrow(() => translate(sql, { resolver }), sql);
  }
  for (const [name, value] of [
    ['readonly', '1'],
    ['max_memory_usage', '0'],
    ['max_execution_time', '1'],
    ['max_rows_to_read', '-1'],
    ['allow_introspection_functions', '1'],
    ['allow_experimental_analyzer', '1'],
    ['allow_ddl', '1'],
    ['user_files_path', "'/'"],
    ['max_ast_depth', '100000'],
    ['no_such_setting', '1'],
  ]) {
    const r = refusal(`SELECT 1 SETTINGS ${name} = ${value}`);
    assert.equal(r.code, 164, name);
    assert.equal(r.status, 403);
    assert.match(r.message, new RegExp(`Setting ${name} \\(at position 19\\)`));
  }
  // A subquery's SETTINGS clause is checked too (the engine's readonly does not check it).
  assert.equal(refusal('SELECT * FROM (SELECT 1 SETTINGS readonly = 0)').code, 164);
  assert.equal(refusal('SELECT * FROM (SELECT 1 SETTINGS max_rows_to_read = 0)').code, 164);
});
