import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TributaryError } from '../../src/errors/tributary-error.ts';
import { defineStream, type StreamSpec } from '../../src/stream/define-stream.ts';
import { historicalSource, rangeSelect } from '../../src/stream/stream-reads.ts';
import { createStatements, dropStatements, historyTable } from '../../src/stream/stream-tables.ts';

const cols = [
  { name: 'id', type: 'int64' },
  { name: 'v', type: 'String' },
];

function fails(spec: StreamSpec, errorName: string, message?: RegExp | string): void {
  assert.throws(
    () => defineStream(spec),
    (e: unknown) => {
      assert.ok(e instanceof TributaryError, String(e));
      assert.equal(e.errorName, errorName, e.message);
      if (typeof message === 'string') assert.equal(e.message, message);
      else if (message) assert.match(e.message, message);
      return true;
    },
  );
}

test('an append stream gets _tp_time, its index and the default ORDER BY / PARTITION BY', () => {
  const d = defineStream({ name: 's', columns: cols });
  assert.equal(d.db, 'default');
  assert.equal(d.mode, 'append');
  assert.equal(d.storageType, 'hybrid');
  assert.deepEqual(
    d.columns.map((c) => [c.name, c.type, c.engineType]),
    [
      ['id', 'int64', 'Int64'],
      ['v', 'string', 'String'],
      ['_tp_time', "datetime64(3, 'UTC')", "DateTime64(3, 'UTC')"],
    ],
  );
  const t = d.columns[2];
  assert.equal(t?.default?.proton, "now64(3, 'UTC')");
  assert.equal(t?.codec, 'DoubleDelta, LZ4');
  assert.deepEqual(
    d.indexes.map((i) => [i.name, i.type, i.granularity]),
    [['_tp_time_index', 'minmax', 2]],
  );
  assert.equal(d.orderBy.proton, 'to_start_of_hour(_tp_time)');
  assert.equal(d.orderBy.engine, 'toStartOfHour(_tp_time)');
  assert.equal(d.partitionBy?.proton, 'to_YYYYMMDD(_tp_time)');
  assert.equal(d.logstoreRetentionBytes, -1);
  assert.equal(d.logstoreRetentionMs, 86_400_000);
  assert.equal(
    d.createQuery,
    [
      'CREATE STREAM default.s',
      '(',
      '  `id` int64,',
      '  `v` string,',
      "  `_tp_time` datetime64(3, 'UTC') DEFAULT now64(3, 'UTC') CODEC(DoubleDelta, LZ4),",
      '  INDEX _tp_time_index _tp_time TYPE minmax GRANULARITY 2',
      ')',
      'ORDER BY to_start_of_hour(_tp_time)',
      'PARTITION BY to_YYYYMMDD(_tp_time)',
      "SETTINGS mode = 'append', storage_type = 'hybrid', logstore_retention_bytes = -1, logstore_retention_ms = 86400000",
    ].join('\n'),
  );
});

test('event_time_column becomes the DEFAULT of _tp_time and must name a column when it is a name', () => {
  const d = defineStream({
    name: 's',
    columns: [{ name: 'ts', type: 'datetime64(3)' }],
    eventTimeColumn: 'ts',
  });
  assert.equal(d.columns.find((c) => c.name === '_tp_time')?.default?.proton, 'ts');
  assert.match(d.createQuery, /event_time_column = 'ts'/);
  const e = defineStream({
    name: 's',
    columns: cols,
    settings: { event_time_column: 'to_datetime64(id, 3)' },
  });
  assert.equal(e.eventTimeColumn?.proton, 'to_datetime64(id, 3)');
  fails({ name: 's', columns: cols, eventTimeColumn: 'nope' }, 'UNKNOWN_IDENTIFIER', /nope/);
});

test('a declared _tp_time must be datetime64 and keeps its place', () => {
  const d = defineStream({ name: 's', columns: [{ name: '_tp_time', type: 'datetime64(6)' }, ...cols] });
  assert.equal(d.columns[0]?.name, '_tp_time');
  assert.equal(d.columns[0]?.default?.proton, "now64(3, 'UTC')");
  assert.equal(d.indexes.length, 0);
  fails(
    { name: 's', columns: [{ name: '_tp_time', type: 'datetime' }] },
    'ILLEGAL_COLUMN',
    /must be datetime64/,
  );
});

test('reserved column names are refused', () => {
  fails({ name: 's', columns: [{ name: '_tp_shard', type: 'int32' }] }, 'ILLEGAL_COLUMN', /reserved/);
  fails({ name: 's', columns: [{ name: 'window_start', type: 'int32' }] }, 'ILLEGAL_COLUMN', /reserved/);
  fails({ name: 's', columns: [{ name: 'window_end', type: 'int32' }] }, 'ILLEGAL_COLUMN', /reserved/);
  fails(
    { name: 's', columns: [{ name: '_tp_delta', type: 'int8' }] },
    'ILLEGAL_COLUMN',
    /only allowed in changelog/,
  );
  fails({ name: 's', columns: [{ name: '_tp_sn', type: 'int32' }] }, 'ILLEGAL_COLUMN', /int64/);
  // _tp_sn int64 is accepted and changes nothing (it is always there, hidden).
  assert.deepEqual(
    defineStream({ name: 's', columns: [{ name: '_tp_sn', type: 'int64' }, ...cols] }).columns.map(
      (c) => c.name,
    ),
    ['id', 'v', '_tp_time'],
  );
});

test('changelog modes get _tp_delta; kv modes need a primary key and are ordered by it', () => {
  const c = defineStream({ name: 's', columns: cols, mode: 'changelog' });
  const delta = c.columns.find((x) => x.name === '_tp_delta');
  assert.equal(delta?.type, 'int8');
  assert.equal(delta?.default?.proton, '1');
  fails(
    { name: 's', columns: cols, mode: 'versioned_kv' },
    'BAD_ARGUMENTS',
    'Primary key is required for changelog kv or versioned kv stream',
  );
  fails(
    { name: 's', columns: cols, mode: 'changelog_kv' },
    'BAD_ARGUMENTS',
    'Primary key is required for changelog kv or versioned kv stream',
  );
  const kv = defineStream({ name: 's', columns: cols, mode: 'versioned_kv', primaryKey: 'id' });
  assert.equal(kv.orderBy.proton, 'id');
  assert.equal(kv.partitionBy, undefined);
  assert.deepEqual(kv.keyColumns, ['id']);
  assert.equal(kv.versionColumn, '_tp_time');
  const two = defineStream({ name: 's', columns: cols, mode: 'changelog_kv', primaryKey: '(id, v)' });
  assert.deepEqual(two.keyColumns, ['id', 'v']);
  assert.ok(two.columns.some((x) => x.name === '_tp_delta'));
  fails({ name: 's', columns: cols, mode: 'upsert' }, 'BAD_ARGUMENTS', /Unknown stream mode/);
});

test('settings: stream settings are read from the SETTINGS map; unknown ones are refused', () => {
  const d = defineStream({
    name: 's',
    columns: cols,
    settings: {
      mode: 'versioned_kv',
      version_column: 'id',
      storage_type: 'streaming',
      logstore_retention_bytes: 1000,
      logstore_retention_ms: '5000',
      shards: 2,
      flush_threshold_count: 1,
    },
    primaryKey: 'v',
  });
  assert.equal(d.mode, 'versioned_kv');
  assert.equal(d.versionColumn, 'id');
  assert.equal(d.storageType, 'streaming');
  assert.equal(d.logstoreRetentionBytes, 1000);
  assert.equal(d.logstoreRetentionMs, 5000);
  assert.equal(d.shards, 2);
  assert.deepEqual(d.settings, { flush_threshold_count: '1' });
  assert.match(d.createQuery, /flush_threshold_count = 1/);
  fails(
    { name: 's', columns: cols, settings: { mod: 'append' } },
    'UNKNOWN_SETTING',
    /mod.*maybe you meant mode/,
  );
  fails({ name: 's', columns: cols, storageType: 'disk' }, 'BAD_ARGUMENTS', /storage_type/);
  fails({ name: 's', columns: cols, versionColumn: 'nope' }, 'UNKNOWN_IDENTIFIER');
});

test('column problems: duplicates, unknown types, DEFAULT with ALIAS', () => {
  fails(
    { name: 's', columns: [...cols, { name: 'id', type: 'int8' }] },
    'DUPLICATE_COLUMN',
    'Column id specified more than once',
  );
  fails({ name: 's', columns: [{ name: 'x', type: 'int33' }] }, 'UNKNOWN_TYPE', /int33/);
  fails({ name: 's', columns: [{ name: 'x', type: 'array(int32' }] }, 'BAD_ARGUMENTS', /Invalid type/);
  fails({ name: 's', columns: [{ name: 'x', type: 'int32', default: '1', alias: '2' }] }, 'BAD_ARGUMENTS');
  fails({ name: '.hidden', columns: cols }, 'BAD_ARGUMENTS');
  for (const name of ['a*b', 'a?b', 'a{1,2}b'])
    fails({ name, columns: cols }, 'BAD_ARGUMENTS', /cannot name a table with \*, \? or \{/);
});

test('Proton expressions are translated for the engine; codecs and comments kept', () => {
  const d = defineStream(
    {
      name: 's',
      columns: [
        {
          name: 'a',
          type: 'low_cardinality(string)',
          default: "lower('X')",
          comment: "it's a",
          codec: 'CODEC(ZSTD(1))',
        },
        { name: 'b', type: 'int32', alias: 'length(a)' },
      ],
      ttl: 'to_datetime(_tp_time) + INTERVAL 1 DAY',
    },
    { translateExpression: (sql) => sql.replace(/to_datetime/g, 'toDateTime') },
  );
  const [a, b] = d.columns;
  assert.equal(a?.engineType, 'LowCardinality(String)');
  assert.equal(a?.codec, 'ZSTD(1)');
  assert.equal(b?.alias?.proton, 'length(a)');
  assert.equal(d.ttl?.engine, 'toDateTime(_tp_time) + INTERVAL 1 DAY');
  assert.equal(d.ttl?.proton, 'to_datetime(_tp_time) + INTERVAL 1 DAY');
  assert.match(
    d.createQuery,
    /`a` low_cardinality\(string\) DEFAULT lower\('X'\) COMMENT 'it\\'s a' CODEC\(ZSTD\(1\)\)/,
  );
  assert.match(d.createQuery, /`b` int32 ALIAS length\(a\)/);
  assert.match(d.createQuery, /TTL to_datetime\(_tp_time\) \+ INTERVAL 1 DAY/);
});

test('engine DDL: a MergeTree history table, a front Buffer and a Merge table over both; Memory for streaming storage', () => {
  const d = defineStream({ name: 's', columns: cols });
  const [mt, buf, merge] = createStatements(d);
  assert.equal(historyTable(d), '`default`.`.tp_history.s`');
  assert.match(mt ?? '', /^CREATE TABLE `default`\.`\.tp_history\.s`/);
  assert.match(mt ?? '', /`_tp_sn` Int64 DEFAULT if\(/);
  assert.match(mt ?? '', /INDEX `_tp_sn_index` `_tp_sn` TYPE minmax GRANULARITY 1/);
  assert.match(
    mt ?? '',
    /ENGINE = MergeTree\nPARTITION BY toYYYYMMDD\(_tp_time\)\nORDER BY toStartOfHour\(_tp_time\)/,
  );
  assert.match(buf ?? '', /^CREATE TABLE `default`\.`\.tp_front\.s`/);
  assert.match(buf ?? '', /`_tp_sn` Int64 MATERIALIZED if\(/);
  assert.match(buf ?? '', /ENGINE = Buffer\('', '', 1,/);
  assert.match(merge ?? '', /^CREATE TABLE `default`\.`s`/);
  assert.match(merge ?? '', /`_tp_sn` Int64 MATERIALIZED if\(/);
  assert.match(
    merge ?? '',
    /ENGINE = Merge\('default', '\^\\\\\.tp_\(front\|history\)\\\\\.\\\\Qs\\\\E\$'\)$/,
  );
  assert.deepEqual(dropStatements(d), [
    'DROP TABLE IF EXISTS `default`.`s` SYNC',
    'DROP TABLE IF EXISTS `default`.`.tp_front.s` SYNC',
    'DROP TABLE IF EXISTS `default`.`.tp_history.s` SYNC',
  ]);
  const m = defineStream({
    name: 'q',
    columns: cols,
    storageType: 'streaming',
    logstoreRetentionBytes: 5000,
  });
  const stmts = createStatements(m);
  assert.equal(stmts.length, 1);
  assert.match(stmts[0] ?? '', /ENGINE = Memory SETTINGS max_bytes_to_keep = 5000/);
  assert.equal(historyTable(m), undefined);
});

test('read SQL: the table itself, latest-per-key subqueries for kv modes, and sequence ranges', () => {
  assert.equal(historicalSource(defineStream({ name: 's', columns: cols })), '`default`.`s`');
  const vkv = historicalSource(
    defineStream({ name: 's', columns: cols, mode: 'versioned_kv', primaryKey: 'id' }),
  );
  assert.match(vkv, /argMax\(tuple\(`v`, `_tp_time`, `_tp_sn`\), \(`_tp_time`, `_tp_sn`\)\)/);
  assert.match(vkv, /GROUP BY id/);
  assert.doesNotMatch(vkv, /WHERE/);
  const ckv = historicalSource(
    defineStream({ name: 's', columns: cols, mode: 'changelog_kv', primaryKey: 'id' }),
  );
  assert.match(ckv, /WHERE tupleElement\(__tp_latest, 3\) != -1/);
  assert.equal(
    rangeSelect(defineStream({ name: 's', columns: cols }), 10, 20),
    'SELECT * FROM `default`.`s` WHERE `_tp_sn` > 10 AND `_tp_sn` <= 20',
  );
});

test('a table ENGINE makes a plain table: its columns only, keys as declared, no _tp_time defaults', () => {
  const d = defineStream({ name: 'm', columns: cols, tableEngine: 'Memory' });
  assert.equal(d.tableEngine, 'Memory');
  assert.deepEqual(
    d.columns.map((c) => c.name),
    ['id', 'v'],
  );
  assert.deepEqual(d.indexes, []);
  assert.equal(d.orderBy.engine, 'tuple()');
  assert.equal(d.partitionBy, undefined);
  assert.equal(d.versionColumn, '_tp_sn');
  assert.equal(d.createQuery, 'CREATE STREAM default.m\n(\n  `id` int64,\n  `v` string\n)\nENGINE = Memory');
  const [mergeTree] = createStatements(d);
  assert.doesNotMatch(mergeTree as string, /_tp_time|PARTITION BY/);
  assert.match(mergeTree as string, /\nORDER BY tuple\(\)$/);

  const mt = defineStream({
    name: 'mt',
    columns: cols,
    tableEngine: 'ReplacingMergeTree(id)',
    orderBy: 'id',
    settings: { index_granularity: 1, logstore_retention_ms: 5000 },
  });
  assert.equal(mt.orderBy.engine, 'id');
  assert.match(
    mt.createQuery,
    /\nENGINE = ReplacingMergeTree\(id\)\nORDER BY id\nSETTINGS logstore_retention_ms = 5000, index_granularity = 1$/,
  );
  // A declared _tp_time stays as written (no DEFAULT added, no index on it).
  const timed = defineStream({
    name: 't',
    columns: [...cols, { name: '_tp_time', type: 'datetime64(3)' }],
    tableEngine: 'MergeTree',
  });
  assert.equal(timed.columns[2]?.default, undefined);
  assert.deepEqual(timed.indexes, []);
  assert.equal(timed.versionColumn, '_tp_time');

  fails(
    { name: 'c', columns: cols, tableEngine: 'Memory', settings: { mode: 'changelog' } },
    'BAD_ARGUMENTS',
    /ENGINE = Memory, a plain table: the mode setting/,
  );
  fails(
    { name: 'e', columns: cols, tableEngine: 'Memory', settings: { event_time_column: 'id' } },
    'BAD_ARGUMENTS',
    /event_time_column setting applies only to streams of the Stream engine/,
  );
});
