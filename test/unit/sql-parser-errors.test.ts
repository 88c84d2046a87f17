/**
 * Negative tests: each file of test/fixtures/sql/errors/ is malformed SQL headed by
 *   -- error: <a substring of the expected message>
 *   -- at: <line>:<column>
 * The whole file is the SQL (the header lines are comments), so positions count them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';
import { isSqlSyntaxError, syntaxErrorToTributary } from '../../src/sql/syntax/syntax-error.ts';

const DIR = join(import.meta.dirname, '../fixtures/sql/errors');

for (const file of readdirSync(DIR)
  .filter((f) => f.endsWith('.sql'))
  .sort()) {
  test(`errors/${file}`, () => {
    const text = readFileSync(join(DIR, file), 'utf8');
    const message = /^-- error: (.*)$/m.exec(text)?.[1];
    const at = /^-- at: (\d+):(\d+)$/m.exec(text);
    assert.ok(message && at, `${file} needs '-- error:' and '-- at:' header lines`);
    let caught: unknown;
    try {
      parseStatement(text);
    } catch (e) {
      caught = e;
    }
    assert.ok(isSqlSyntaxError(caught), `expected a syntax error, got ${String(caught)}`);
    assert.ok(caught.message.includes(message), `message "${caught.message}" lacks "${message}"`);
    assert.deepEqual([caught.line, caught.column], [Number(at[1]), Number(at[2])], caught.message);
    assert.match(caught.message, new RegExp(`at line ${at[1]}, column ${at[2]}$`));
  });
}

test('a syntax error becomes the catalogue error SQL_SYNTAX_ERROR (code 62) at the API boundary', () => {
  try {
    parseStatement('SELECT a FROM\nWHERE');
    assert.fail('should not parse');
  } catch (e) {
    assert.ok(isSqlSyntaxError(e));
    const t = syntaxErrorToTributary(e);
    assert.ok(isTributaryError(t));
    assert.equal(t.code, 62);
    assert.equal(t.errorName, 'SQL_SYNTAX_ERROR');
    assert.equal(t.status, 400);
    assert.equal(t.params.line, 2);
    assert.equal(t.params.column, 1);
    assert.match(t.message, /^Syntax error at line 2, column 1: Expected one of: .* but found 'WHERE'$/);
  }
});

test('absurdly deep nesting is a syntax error, not a stack overflow', () => {
  const deep = `SELECT ${'('.repeat(5000)}1${')'.repeat(5000)}`;
  assert.throws(() => parseStatement(deep), /Maximum parse depth \(256\) exceeded/);
  const nestedQueries = `${'SELECT * FROM ('.repeat(2000)}SELECT 1${')'.repeat(2000)}`;
  assert.throws(
    () => parseStatement(nestedQueries),
    (e: unknown) => isSqlSyntaxError(e),
  );
  // ordinary depth is fine
  parseStatement(`SELECT ${'('.repeat(100)}1${')'.repeat(100)}`);
});
