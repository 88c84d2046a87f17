import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Statement } from '../../src/sql/ast/statement.ts';
import { parseStatement, parseStatements } from '../../src/sql/parser/parse.ts';
import { formatSql } from '../../src/sql/printer/format.ts';
import { bin, id, num, roundTrip, stmt, str } from '../helpers/sql-ast.ts';

function as<K extends Statement['kind']>(s: Statement, kind: K): Extract<Statement, { kind: K }> {
  assert.equal(s.kind, kind);
  return s as Extract<Statement, { kind: K }>;
}

describe('INSERT', () => {
  test('VALUES rows with or without commas between them', () => {
    const i = as(stmt("insert into s (a, b) values (1, 'x')(2, 'y'), (3, 'z')"), 'Insert');
    assert.deepEqual(i.target, { name: 's' });
    assert.deepEqual(i.columns, [id('a'), id('b')]);
    assert.deepEqual(i.values, [
      [num('1'), str('x')],
      [num('2'), str('y')],
      [num('3'), str('z')],
    ]);
    roundTrip("insert into s (a, b) values (1, 'x')(2, 'y')");
  });

  test('column lists with * EXCEPT (and the suite’s `expect` spelling)', () => {
    const i = as(stmt("insert into s(* except _tp_time) values (1, 'a')"), 'Insert');
    assert.deepEqual(i.columns, [{ kind: 'Asterisk', except: ['_tp_time'] }]);
    const j = as(stmt("insert into s (* expect _tp_time) values (1, 'a')"), 'Insert');
    assert.deepEqual(j.columns, i.columns);
  });

  test('INSERT .. SELECT, with SETTINGS before the query', () => {
    const i = as(stmt('insert into t settings s3_min_upload_file_size = 1048576 select * from s'), 'Insert');
    assert.equal(i.settings?.[0]?.name, 's3_min_upload_file_size');
    assert.equal(i.query?.kind, 'Select');
    roundTrip('insert into t settings a = 1 select * from s');
    roundTrip('insert into db.t (a) select a from s where a > 1');
  });

  test('INSERT .. FORMAT keeps the raw data', () => {
    const i = as(parseStatement('insert into t format JSONEachRow {"a": 1}\n{"a": 2}'), 'Insert');
    assert.equal(i.format, 'JSONEachRow');
    assert.equal(i.data, '{"a": 1}\n{"a": 2}');
  });
});

describe('SHOW, DESCRIBE, EXPLAIN', () => {
  test('SHOW lists', () => {
    assert.deepEqual(stmt('show streams'), { kind: 'Show', what: 'STREAMS' });
    assert.deepEqual(stmt("show streams from db like 'a%'"), {
      kind: 'Show',
      what: 'STREAMS',
      from: { name: 'db' },
      like: 'a%',
    });
    assert.deepEqual(stmt("SHOW STREAMS where name = 'x'"), {
      kind: 'Show',
      what: 'STREAMS',
      where: bin('=', id('name'), str('x')),
    });
    for (const w of [
      'TABLES',
      'DATABASES',
      'VIEWS',
      'MATERIALIZED VIEWS',
      'INPUTS',
      'FORMAT SCHEMAS',
      'DICTIONARIES',
      'FUNCTIONS',
      'EXTERNAL STREAMS',
      'EXTERNAL TABLES',
    ]) {
      assert.equal(as(stmt(`show ${w.toLowerCase()}`), 'Show').what, w);
      roundTrip(`show ${w}`);
    }
  });

  test('SHOW CREATE [object] name', () => {
    assert.deepEqual(stmt('show create s'), { kind: 'ShowCreate', target: { name: 's' } });
    assert.deepEqual(stmt('show create input my_es'), {
      kind: 'ShowCreate',
      object: 'INPUT',
      target: { name: 'my_es' },
    });
    assert.deepEqual(stmt('SHOW CREATE FORMAT SCHEMA p;'), {
      kind: 'ShowCreate',
      object: 'FORMAT SCHEMA',
      target: { name: 'p' },
    });
    roundTrip('show create materialized view db.mv');
  });

  test('DESCRIBE / DESC of a stream, a table function, a query', () => {
    assert.deepEqual(stmt('describe s'), { kind: 'Describe', target: { name: 's' } });
    assert.deepEqual(stmt('desc stream db.s'), { kind: 'Describe', target: { database: 'db', name: 's' } });
    assert.equal(as(stmt('DESCRIBE (SELECT f(1) AS a)'), 'Describe').query?.kind, 'Select');
    assert.ok(as(stmt('describe table(s)'), 'Describe').tableFunction);
  });

  test('EXPLAIN kinds and options', () => {
    const e = as(stmt('explain syntax select 1'), 'Explain');
    assert.equal(e.explainKind, 'SYNTAX');
    assert.equal(as(stmt('explain plan header = 1 select 1'), 'Explain').options[0]?.name, 'header');
    roundTrip('explain query tree select 1');
  });
});

describe('control statements', () => {
  test('KILL QUERY WHERE .. [SYNC]', () => {
    assert.deepEqual(stmt("kill query where query_id='2700' sync"), {
      kind: 'KillQuery',
      where: bin('=', id('query_id'), str('2700')),
      mode: 'SYNC',
    });
  });

  test('USE, SET, OPTIMIZE, SYSTEM', () => {
    assert.deepEqual(stmt('use analytics'), { kind: 'Use', database: 'analytics' });
    assert.deepEqual(stmt('set max_threads = 4'), {
      kind: 'Set',
      settings: [{ kind: 'Setting', name: 'max_threads', value: num('4') }],
    });
    assert.deepEqual(stmt('optimize stream s final'), {
      kind: 'Optimize',
      target: { name: 's' },
      final: true,
      deduplicate: false,
    });
    assert.deepEqual(stmt('system flush logs'), { kind: 'System', words: ['FLUSH', 'LOGS'] });
    assert.deepEqual(stmt('system stop merges db.t'), {
      kind: 'System',
      words: ['STOP', 'MERGES'],
      target: { database: 'db', name: 't' },
    });
  });

  test('SUBSCRIBE TO / RECOVER FROM / UNSUBSCRIBE TO', () => {
    const s = as(
      stmt('subscribe to select count() from s emit periodic 1s settings checkpoint_interval=1'),
      'Subscribe',
    );
    assert.equal(s.query.kind === 'Select' && s.query.settings?.[0]?.name, 'checkpoint_interval');
    assert.deepEqual(stmt("recover from '3000'"), { kind: 'Recover', queryId: '3000' });
    assert.deepEqual(stmt("unsubscribe to '3000'"), { kind: 'Unsubscribe', queryId: '3000' });
    roundTrip('subscribe to select count() from s settings checkpoint_interval = 1');
  });
});

describe('scripts and formatting', () => {
  test('several statements separated by semicolons', () => {
    const list = parseStatements('select 1; select 2;;\n drop stream s;');
    assert.deepEqual(
      list.map((s) => s.kind),
      ['Select', 'Select', 'Drop'],
    );
    assert.throws(
      () => parseStatement('select 1; select 2'),
      /Expected end of query \(one statement only\) but found 'select' at line 1, column 11/,
    );
  });

  test('formatSql formats each statement', () => {
    assert.equal(formatSql('select 1;drop stream s', { pretty: false }), 'SELECT 1;\n\nDROP STREAM s');
  });

  test('comments are skipped', () => {
    assert.deepEqual(stmt('select /* c */ 1 -- tail\n'), stmt('select 1'));
  });
});
