import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineError, parseEngineMessage } from '../../src/engine/engine-error.ts';
import { err } from '../../src/errors/tributary-error.ts';

test('engine messages split into code, name and text', () => {
  const m = parseEngineMessage(
    "Code: 60. DB::Exception: Unknown table expression identifier 'x' in scope SELECT * FROM x. (UNKNOWN_TABLE)",
  );
  assert.deepEqual(m, {
    code: 60,
    name: 'UNKNOWN_TABLE',
    message: "Unknown table expression identifier 'x' in scope SELECT * FROM x.",
  });
});

test('engine errors keep the engine code, map to a status, and name the timeplusd system', () => {
  const e = engineError(
    Object.assign(
      new Error('Code: 57. DB::Exception: Table default.t already exists. (TABLE_ALREADY_EXISTS)'),
      { clickhouseCode: 57 },
    ),
  );
  assert.equal(e.code, 57);
  assert.equal(e.status, 409);
  assert.equal(e.errorName, 'TABLE_ALREADY_EXISTS');
  assert.deepEqual(e.toBody(), { code: 57, message: 'Table default.t already exists.', system: 'timeplusd' });
  assert.equal(
    engineError(new Error('Code: 62. DB::Exception: Syntax error: x. (SYNTAX_ERROR)')).status,
    400,
  );
  assert.equal(
    engineError(new Error('Code: 394. DB::Exception: Query was cancelled. (QUERY_WAS_CANCELLED)')).status,
    499,
  );
});

test('messages without a code become ENGINE_ERROR; Tributary errors pass through', () => {
  assert.equal(engineError(new Error('boom')).errorName, 'ENGINE_ERROR');
  const own = err('UNKNOWN_STREAM', { name: 's' });
  assert.equal(engineError(own), own);
});

test('SETTINGS clauses go after the statement, but never into the inline data of an INSERT', async () => {
  const { withSettings } = await import('../../src/engine/settings-clause.ts');
  assert.equal(
    withSettings('SELECT 1;', { max_threads: 1, log_comment: "it's" }),
    "SELECT 1\nSETTINGS max_threads = 1, log_comment = 'it\\'s'",
  );
  assert.equal(withSettings('SELECT 1', undefined), 'SELECT 1');
  assert.equal(withSettings("INSERT INTO t VALUES (1, 'x')", { a: 1 }), "INSERT INTO t VALUES (1, 'x')");
  assert.equal(
    withSettings('insert into t format JSONEachRow {"a":1}', { a: 1 }),
    'insert into t format JSONEachRow {"a":1}',
  );
  assert.equal(withSettings('INSERT INTO t SELECT 1', { a: 1 }), 'INSERT INTO t SELECT 1\nSETTINGS a = 1');
});
