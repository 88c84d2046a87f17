import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Statement } from '../../src/sql/ast/statement.ts';
import { printDataType } from '../../src/sql/types/data-type.ts';
import { call, id, num, roundTrip, stmt, str } from '../helpers/sql-ast.ts';

function as<K extends Statement['kind']>(s: Statement, kind: K): Extract<Statement, { kind: K }> {
  assert.equal(s.kind, kind);
  return s as Extract<Statement, { kind: K }>;
}

describe('CREATE STREAM', () => {
  test('columns with types, DEFAULT/ALIAS/CODEC/COMMENT/TTL, indexes, and the stream clauses', () => {
    const text = `create stream if not exists db.s (
      id string comment 'device',
      v float32 default 0,
      doubled float64 alias v * 2,
      ts datetime64(3, 'UTC') default now64(3, 'UTC') codec(DoubleDelta, LZ4),
      n nullable(int32) ttl to_datetime(ts) + interval 1 day,
      index idx id type bloom_filter(0.01) granularity 4
    ) order by to_start_of_hour(ts) partition by to_YYYYMMDD(ts) primary key id
      ttl to_datetime(_tp_time) + interval 12 hour, to_datetime(ts) + interval 1 year to volume 'cold'
      settings mode = 'versioned_kv', event_time_column = 'ts' comment 'a stream'`;
    const s = as(stmt(text), 'CreateStream');
    assert.equal(s.variant, 'STREAM');
    assert.equal(s.ifNotExists, true);
    assert.deepEqual(s.target, { database: 'db', name: 's' });
    assert.deepEqual(
      s.columns.map((c) => [c.name, c.type && printDataType(c.type)]),
      [
        ['id', 'string'],
        ['v', 'float32'],
        ['doubled', 'float64'],
        ['ts', "datetime64(3, 'UTC')"],
        ['n', 'nullable(int32)'],
      ],
    );
    assert.equal(s.columns[0]?.comment, 'device');
    assert.deepEqual(s.columns[1]?.default, { kind: 'DEFAULT', expr: num('0') });
    assert.equal(s.columns[2]?.default?.kind, 'ALIAS');
    assert.deepEqual(s.columns[3]?.codec, [id('DoubleDelta'), id('LZ4')]);
    assert.ok(s.columns[4]?.ttl);
    assert.deepEqual(s.indexes[0]?.type, call('bloom_filter', num('0.01')));
    assert.deepEqual(s.primaryKey, id('id'));
    assert.equal(s.ttl?.length, 2);
    assert.deepEqual(s.ttl?.[1]?.action, 'TO VOLUME');
    assert.deepEqual(
      s.settings?.map((x) => x.name),
      ['mode', 'event_time_column'],
    );
    assert.equal(s.comment, 'a stream');
    roundTrip(text);
  });

  test('RANDOM, EXTERNAL and MUTABLE streams', () => {
    const r = as(
      stmt(
        'create random stream r(id int default rand()%4) engine Random() settings eps=1000, interval_time=100',
      ),
      'CreateStream',
    );
    assert.equal(r.variant, 'RANDOM');
    assert.deepEqual(r.engine, call('Random'));
    const e = as(
      stmt(
        "create external stream if not exists k(raw string) settings type = 'kafka', brokers = 'b:9092', topic = 't'",
      ),
      'CreateStream',
    );
    assert.equal(e.variant, 'EXTERNAL');
    const m = as(stmt('create mutable stream m(k string, v int, primary key k)'), 'CreateStream');
    assert.equal(m.variant, 'MUTABLE');
    assert.deepEqual(m.columnsPrimaryKey, id('k'));
    roundTrip("create random stream r(id uint8 default random_in_type('uint8', x -> to_uint8(x + 10), 5))");
    roundTrip('create mutable stream m(k string, v int, primary key k)');
  });

  test('types without arguments and enum/tuple/map types', () => {
    roundTrip(
      "create stream t(e enum('a'=1, 'b'=2), tp tuple(s string, i int), m map(string, int), a array(int), d decimal32(3), x Datetime64(3))",
    );
  });
});

describe('views', () => {
  test('CREATE [OR REPLACE] [MATERIALIZED] VIEW [IF NOT EXISTS] .. [INTO t] AS', () => {
    const mv = as(
      stmt(
        'create materialized view if not exists mv into db.target as select i + 1 as ii from s settings pause_on_start = true',
      ),
      'CreateView',
    );
    assert.equal(mv.materialized, true);
    assert.deepEqual(mv.into, { database: 'db', name: 'target' });
    assert.equal(mv.query.kind === 'Select' && mv.query.settings?.[0]?.name, 'pause_on_start');
    const v = as(stmt('create or replace view v as (select count() from s)'), 'CreateView');
    assert.equal(v.orReplace, true);
    assert.equal(v.materialized, false);
    roundTrip('create or replace view v as (select count() from s)');
    roundTrip('create materialized view mv into t as select * from s');
  });
});

describe('external tables, inputs, dictionaries, format schemas, functions, databases', () => {
  test('CREATE EXTERNAL TABLE with PARTITION BY and SETTINGS', () => {
    const t = as(
      stmt(
        "create external table if not exists logs (ts datetime64(3), msg string) partition by to_YYYYMM(ts) settings type='s3', bucket='b', write_to='x/{_partition_id}.json'",
      ),
      'CreateExternalTable',
    );
    assert.equal(t.columns.length, 2);
    assert.ok(t.partitionBy);
    assert.deepEqual(t.settings?.[0], { kind: 'Setting', name: 'type', value: str('s3') });
    roundTrip("create external table logs (ts datetime64(3)) settings type='s3', read_from='a/*.json'");
  });

  test('CREATE INPUT .. SETTINGS .. COMMENT', () => {
    const i = as(
      stmt(
        "CREATE INPUT my_es SETTINGS type='elastic', target_stream='es_target', tcp_port=9200, listen_host='0.0.0.0' COMMENT 'bulk input'",
      ),
      'CreateInput',
    );
    assert.equal(i.name, 'my_es');
    assert.equal(i.settings.length, 4);
    assert.equal(i.comment, 'bulk input');
    roundTrip("CREATE INPUT my_es SETTINGS type='elastic', target_stream='es_target' COMMENT 'bulk input'");
  });

  test('CREATE DICTIONARY with SOURCE/LAYOUT/LIFETIME', () => {
    const text =
      "create or replace dictionary if not exists d (k string, v uint64 default 0 injective) primary key k source(TIMEPLUS(STREAM 'kv' DB 'default')) layout(HASHED()) lifetime(min 0 max 300) comment 'c'";
    const d = as(stmt(text), 'CreateDictionary');
    assert.equal(d.source?.name, 'TIMEPLUS');
    assert.deepEqual(d.source?.args[0], { key: 'STREAM', value: str('kv') });
    assert.equal(d.layout?.name, 'HASHED');
    assert.deepEqual(d.lifetime, { min: num('0'), max: num('300') });
    assert.equal(d.columns[1]?.dictionary?.injective, true);
    roundTrip(text);
    roundTrip(
      "create dictionary d (k uint64, v string) primary key k source(CLICKHOUSE(host 'localhost' port 9000 table 't')) layout(FLAT(INITIAL_ARRAY_SIZE 50000)) lifetime(300)",
    );
  });

  test('CREATE / DROP FORMAT SCHEMA', () => {
    const f = as(
      stmt('CREATE OR REPLACE FORMAT SCHEMA p AS \'syntax = "proto3";\' TYPE Protobuf'),
      'CreateFormatSchema',
    );
    assert.equal(f.schemaType, 'Protobuf');
    assert.equal(f.body, 'syntax = "proto3";');
    assert.deepEqual(as(stmt('drop format schema if exists p'), 'Drop').object, 'FORMAT SCHEMA');
  });

  test('CREATE FUNCTION: SQL lambda, JavaScript (also aggregate), REMOTE', () => {
    const sql = as(stmt('create function plus_one as (x) -> x + 1'), 'CreateFunction');
    assert.equal(sql.variant, 'SQL');
    const js = as(
      stmt(
        'CREATE OR REPLACE AGGREGATE FUNCTION sec(value float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $$ { initialize: function() {} } $$',
      ),
      'CreateFunction',
    );
    assert.equal(js.variant, 'SCRIPT');
    assert.equal(js.aggregate, true);
    assert.equal(js.language, 'JAVASCRIPT');
    assert.equal(js.body, ' { initialize: function() {} } ');
    const remote = as(
      stmt(
        "CREATE Remote FUNCTION ip_lookup(ip string) RETURNS string URL 'https://x' AUTH_METHOD 'auth_header' AUTH_HEADER 'auth' AUTH_KEY 'k' EXECUTION_TIMEOUT 60000",
      ),
      'CreateFunction',
    );
    assert.equal(remote.variant, 'REMOTE');
    assert.equal(remote.url, 'https://x');
    assert.equal(remote.authKey, 'k');
    for (const t of [
      'create function plus_one as (x) -> x + 1',
      'CREATE AGGREGATE FUNCTION IF NOT EXISTS f(v float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $$ a $$ b $$',
      "CREATE REMOTE FUNCTION f(ip string) RETURNS string URL 'u' AUTH_METHOD 'none'",
    ]) {
      roundTrip(
        t.includes('$$ b $$')
          ? 'CREATE FUNCTION f(v float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $x$ a $$ b $x$'
          : t,
      );
    }
  });

  test('CREATE DATABASE', () => {
    assert.deepEqual(stmt('create database if not exists analytics'), {
      kind: 'CreateDatabase',
      ifNotExists: true,
      name: 'analytics',
    });
  });
});

describe('DROP / ALTER / RENAME / TRUNCATE', () => {
  test('DROP every object kind', () => {
    for (const obj of [
      'STREAM',
      'VIEW',
      'MATERIALIZED VIEW',
      'TABLE',
      'EXTERNAL TABLE',
      'EXTERNAL STREAM',
      'INPUT',
      'DICTIONARY',
      'FORMAT SCHEMA',
      'FUNCTION',
      'DATABASE',
    ]) {
      const d = as(stmt(`drop ${obj.toLowerCase()} if exists db.x`), 'Drop');
      assert.equal(d.object, obj);
      assert.equal(d.ifExists, true);
      roundTrip(`drop ${obj} db.x`);
    }
  });

  test('ALTER STREAM commands', () => {
    const a = as(
      stmt(
        "alter stream s add column if not exists c int first, add column d float after c, drop column if exists e, rename column if exists f to g, modify column h int, modify setting logstore_retention_bytes=1000, modify ttl now() - 1d, remove ttl, modify comment 'x'",
      ),
      'Alter',
    );
    assert.deepEqual(
      a.commands.map((c) => c.kind),
      [
        'AddColumn',
        'AddColumn',
        'DropColumn',
        'RenameColumn',
        'ModifyColumn',
        'ModifySetting',
        'ModifyTtl',
        'RemoveTtl',
        'ModifyComment',
      ],
    );
    roundTrip(
      "alter stream s add column if not exists c int first, add column d float after c, drop column if exists e, rename column if exists f to g, modify column h int, modify setting logstore_retention_bytes=1000, modify ttl now() - 1d, remove ttl, modify comment 'x'",
    );
    roundTrip(
      'alter stream s add index i c type minmax granularity 2, drop index i, delete where x = 1, update a = 1, b = 2 where c',
    );
  });

  test('RENAME and TRUNCATE', () => {
    const r = as(stmt('rename stream if exists a to b'), 'Rename');
    assert.deepEqual(r.pairs, [{ from: { name: 'a' }, to: { name: 'b' } }]);
    assert.deepEqual(stmt('truncate stream db.s'), {
      kind: 'Truncate',
      object: 'STREAM',
      ifExists: false,
      target: { database: 'db', name: 's' },
    });
  });

  test('names that start with digits (Proton tests use 024_types)', () => {
    assert.deepEqual(as(stmt('DROP STREAM IF EXISTS 024_changelog_types'), 'Drop').target, {
      name: '024_changelog_types',
    });
    assert.equal(roundTrip('DROP STREAM 024_x'), 'DROP STREAM `024_x`');
  });
});
