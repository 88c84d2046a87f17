import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyze } from '../../src/sql/analyzer/analyze.ts';
import { parseDdl } from '../../src/sql/analyzer/parse-ddl.ts';
import {
  findAggregates,
  findStreamingFunctions,
  isAggregation,
  referencedColumns,
} from '../../src/sql/analyzer/query-facts.ts';
import { rewindPredicates } from '../../src/sql/analyzer/rewind.ts';
import { isStreamingQuery } from '../../src/sql/analyzer/streaming.ts';
import type { SelectQuery } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { printExpression } from '../../src/sql/printer/format.ts';
import { mapResolver } from '../../src/sql/translator/resolver.ts';

const resolver = mapResolver({
  'default.s': {
    kind: 'stream',
    engineSql: '`default`.`s`',
    columns: [
      { name: 'id', type: 'string' },
      { name: 'value', type: 'float32' },
      { name: 'ts', type: "DateTime64(3, 'UTC')" },
    ],
  },
  'default.d': {
    kind: 'stream',
    engineSql: '`default`.`d`',
    columns: [
      { name: 'id', type: 'string' },
      { name: 'type', type: 'low_cardinality(string)' },
    ],
  },
  'default.t': { kind: 'external_table', engineSql: '`default`.`t`' },
  'default.mv': {
    kind: 'materialized_view',
    engineSql: '`default`.`mv`',
    columns: [{ name: 'n', type: 'uint64' }],
  },
  'default.v_stream': { kind: 'view', engineSql: '', viewQuery: parseQuery('select id from s') },
  'default.v_table': { kind: 'view', engineSql: '', viewQuery: parseQuery('select id from table(s)') },
  'db2.s': { kind: 'stream', engineSql: '`db2`.`s`', database: 'db2' },
});

const select = (sql: string) => parseQuery(sql) as SelectQuery;

describe('is_streaming', () => {
  const cases: [string, boolean][] = [
    ['select * from s', true],
    ['select * from table(s)', false],
    ['select * from tumble(s, 5s)', true],
    ['select * from tumble(table(s), 5s)', false],
    ["select * from s settings query_mode = 'table'", false],
    ['select * from t', false],
    ['select * from mv', true],
    ['select * from table(mv)', false],
    ['select * from v_stream', true],
    ['select * from v_table', false],
    ['with c as (select * from s) select * from c', true],
    ['with c as (select * from table(s)) select * from c', false],
    ['select * from table(s) as a join d as b on a.id = b.id', true],
    ['select * from (select * from s)', true],
    ['select 1', false],
    ['select * from numbers(10)', false],
    ['select 1 union all select id from s', true],
    ['select * from dedup(s, id)', true],
  ];
  for (const [sql, expected] of cases) {
    test(sql, () => assert.equal(isStreamingQuery(parseQuery(sql), resolver), expected));
  }
});

describe('analyze', () => {
  test('the Analysis shape for a windowed join', () => {
    const a = analyze(
      'select a.id, b.type, max(a.value) as m from tumble(s, ts, 5s) as a join table(d) as b on a.id = b.id group by a.id, b.type, window_start',
      resolver,
    );
    assert.equal(a.query_type, 'select');
    assert.equal(a.is_streaming, true);
    assert.equal(a.has_aggr, true);
    assert.equal(a.has_table_join, true);
    assert.equal(a.has_union, false);
    assert.equal(a.has_subquery, false);
    assert.deepEqual(a.group_by_columns, ['a.id', 'b.type', 'window_start']);
    assert.deepEqual(
      a.result_columns.map((c) => [c.database, c.table, c.column, c.column_type, c.is_view]),
      [
        ['default', 's', 'id', 'string', false],
        ['default', 'd', 'type', 'low_cardinality(string)', false],
        ['', '', 'm', '', false],
      ],
    );
    assert.deepEqual(a.required_columns.map((c) => `${c.table}.${c.column}:${c.column_type}`).sort(), [
      'd.id:string',
      'd.type:low_cardinality(string)',
      's.id:string',
      "s.ts:datetime64(3, 'UTC')",
      's.value:float32',
    ]);
    assert.match(
      a.rewritten_query,
      /^SELECT a\.id, b\.type, max\(a\.value\) AS m FROM \(SELECT \*, CAST\(toStartOfInterval/,
    );
  });

  test('SELECT * expands to the known columns; views are flagged', () => {
    const a = analyze('select * from mv', resolver);
    assert.deepEqual(a.result_columns, [
      { database: 'default', table: 'mv', column: 'n', column_type: 'uint64', is_view: true },
    ]);
  });

  test('subqueries, unions, query types', () => {
    assert.equal(analyze('select id from (select id from s)', resolver).has_subquery, true);
    assert.equal(analyze('select id from s union all select id from d', resolver).has_union, true);
    assert.equal(analyze('insert into t select * from table(s)', resolver).query_type, 'insert');
    const ddl = analyze('create stream x (a int)', resolver);
    assert.equal(ddl.query_type, 'create');
    assert.equal(ddl.rewritten_query, 'CREATE STREAM x (a int)');
    assert.equal(analyze('drop stream x', resolver).query_type, 'drop');
    assert.equal(analyze('show streams', resolver).query_type, 'show');
  });

  test('streaming-only queries keep the canonical Proton text as rewritten_query', () => {
    const a = analyze('select emit_version(), value from s', resolver);
    assert.equal(a.rewritten_query, 'SELECT emit_version(), value FROM s');
    assert.equal(a.is_streaming, true);
  });

  test('unknown streams and syntax errors are errors', () => {
    assert.throws(() => analyze('select * from nope', resolver), /Stream nope doesn't exist/);
    assert.throws(() => analyze('select from', resolver), /line 1, column/);
  });
});

describe('query facts', () => {
  test('referenced columns of one level, lambda parameters and stream names excluded', () => {
    const q = select(
      'select array_map(x -> x + value, arr), id from tumble(s, ts, 5s) where k in (select z from t) and a.b = 1',
    );
    assert.deepEqual(
      referencedColumns(q).map((i) => i.parts.join('.')),
      ['value', 'arr', 'id', 'ts', 'k', 'a.b'],
    );
  });

  test('aggregates: OVER calls and nested queries excluded', () => {
    const q = select(
      'select count(), sum(x) over (partition by k), (select max(y) from t), p90(z), lag(v) from s having unique(w) > 1',
    );
    assert.deepEqual(
      findAggregates(q).map((f) => f.name),
      ['count', 'p90', 'unique'],
    );
    assert.equal(isAggregation(select('select a from s group by a')), true);
    assert.equal(isAggregation(select('select a, sum(b) over () from s')), false);
  });

  test('streaming functions anywhere in the tree', () => {
    const q = parseQuery(
      'select emit_version(), (select lag(x) from s) from a join b on date_diff_within(10s)',
    );
    assert.deepEqual(
      findStreamingFunctions(q).map((f) => f.name),
      ['emit_version', 'lag', 'date_diff_within'],
    );
  });

  test('rewind predicates on _tp_time / _tp_sn against constants', () => {
    const where = select(
      "select * from s where _tp_sn >= 1 and id = 'x' and '2022-12-01' < _tp_time and _tp_time > earliest_ts() and event_time between 1 and 2",
    ).where;
    const { predicates, rest } = rewindPredicates(where, new Map([['event_time', '_tp_time']]));
    assert.deepEqual(
      predicates.map((p) => `${p.column} ${p.op} ${printExpression(p.value)}`),
      [
        '_tp_sn >= 1',
        "_tp_time > '2022-12-01'",
        '_tp_time > earliest_ts()',
        '_tp_time >= 1',
        '_tp_time <= 2',
      ],
    );
    assert.equal(rest && printExpression(rest), "id = 'x'");
    // a non-constant comparison is not a rewind
    assert.equal(rewindPredicates(select('select * from s where _tp_time > ts').where).predicates.length, 0);
  });
});

describe('parseDdl', () => {
  test('names the resource of DDL statements', () => {
    assert.deepEqual(parseDdl('create stream db.s (a int)'), {
      parsed: true,
      resourceDB: 'db',
      resourceName: 's',
      resourceType: 'stream',
    });
    assert.deepEqual(parseDdl('create materialized view mv into t as select 1'), {
      parsed: true,
      resourceDB: 'default',
      resourceName: 'mv',
      resourceType: 'materialized_view',
    });
    assert.deepEqual(parseDdl('CREATE RANDOM STREAM r (a int)'), {
      parsed: true,
      resourceDB: 'default',
      resourceName: 'r',
      resourceType: 'random_stream',
    });
    assert.deepEqual(parseDdl("CREATE EXTERNAL TABLE x SETTINGS type='s3'"), {
      parsed: true,
      resourceDB: 'default',
      resourceName: 'x',
      resourceType: 'external_table',
    });
    assert.deepEqual(parseDdl("create input i settings type='elastic'"), {
      parsed: true,
      resourceDB: 'default',
      resourceName: 'i',
      resourceType: 'input',
    });
    assert.deepEqual(parseDdl('drop view if exists v'), {
      parsed: true,
      resourceDB: 'default',
      resourceName: 'v',
      resourceType: 'view',
    });
    assert.deepEqual(parseDdl('create database analytics'), {
      parsed: true,
      resourceDB: 'analytics',
      resourceName: 'analytics',
      resourceType: 'database',
    });
  });

  test('non-DDL and unparsable text is parsed: false', () => {
    const no = { parsed: false, resourceDB: '', resourceName: '', resourceType: '' };
    assert.deepEqual(parseDdl('select 1'), no);
    assert.deepEqual(parseDdl('create stream ('), no);
  });
});
