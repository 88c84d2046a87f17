// The stateless runner's script splitter and test hints (scripts/stateless/script-splitter.ts,
// test-hints.ts): statements end at `;` outside strings, quoted names and comments; same-line
// comments after the `;` belong to the statement; hints are read as ClickHouse's client reads them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitScript } from '../../scripts/stateless/script-splitter.ts';
import { hintsOf } from '../../scripts/stateless/test-hints.ts';

test('statements end at semicolons outside strings, quoted names and comments', () => {
  const script = [
    'SELECT \'a;b\', "c;d", `e;f`; -- one',
    "SELECT 'it''s; \\' ;' /* x; y */ , 2;",
    '-- a comment; with a semicolon',
    'SELECT 3 -- trailing; comment',
    ';',
    ';;',
    'SELECT 4',
  ].join('\n');
  const sts = splitScript(script);
  assert.deepEqual(
    sts.map((s) => s.sql),
    [
      'SELECT \'a;b\', "c;d", `e;f`',
      "SELECT 'it''s; \\' ;' /* x; y */ , 2",
      'SELECT 3 -- trailing; comment',
      'SELECT 4',
    ],
  );
  assert.deepEqual(
    sts.map((s) => s.line),
    [1, 2, 4, 7],
  );
  // strings and comments are blanked out in `code`, so keyword checks do not see into them
  assert.equal(sts[0]!.code, 'SELECT \'   \', "   ", `   `');
  assert.equal(sts[1]!.code, "SELECT '           '   , 2");
});

test('the comments after the semicolon on its line belong to the statement; the next line starts the next one', () => {
  const sts = splitScript(
    [
      'SELECT 1; -- { serverError 47 }',
      '-- leading of the second',
      'SELECT 2; /* a */ -- b',
      'SELECT 3;',
    ].join('\n'),
  );
  assert.deepEqual(sts[0]!.comments, ['-- { serverError 47 }']);
  assert.equal(sts[0]!.echoText, 'SELECT 1; -- { serverError 47 }');
  assert.deepEqual(sts[1]!.leadingComments, ['-- leading of the second']);
  assert.deepEqual(sts[1]!.comments, ['/* a */', '-- b']);
  assert.equal(sts[1]!.echoText, '-- leading of the second\nSELECT 2; /* a */ -- b');
  assert.deepEqual(sts[2]!.leadingComments, []);
  assert.equal(sts[2]!.echoText, 'SELECT 3;');
});

test('nested block comments, # comments and multi-line statements', () => {
  const sts = splitScript('/* outer /* inner; */ still; */ SELECT\n  1\n  # note; here\n  + 1;\nSELECT 2');
  assert.equal(sts.length, 2);
  assert.equal(sts[0]!.sql, 'SELECT\n  1\n  # note; here\n  + 1');
  assert.equal(sts[0]!.line, 1);
  assert.equal(sts[1]!.line, 5);
  assert.equal(sts[1]!.echoText, 'SELECT 2');
});

test('INSERT data with semicolons in strings stays one statement', () => {
  const sts = splitScript("INSERT INTO t VALUES ('a;b', 1), ('c\\';', 2);\nSELECT * FROM t;");
  assert.equal(sts.length, 2);
  assert.equal(sts[0]!.sql, "INSERT INTO t VALUES ('a;b', 1), ('c\\';', 2)");
});

test('error hints: codes, names, several codes, and both client and server errors', () => {
  const hints = (s: string) => hintsOf(splitScript(s)[0]!);
  assert.deepEqual(hints('SELECT x; -- { serverError 47 }').errors, [47]);
  assert.deepEqual(hints('SELECT x; --{serverError 47}').errors, [47]);
  assert.deepEqual(hints('SELECT x; -- { serverError 47; }').errors, [47]);
  assert.deepEqual(hints('SELECT x; -- { serverError CANNOT_PARSE_DATETIME }').errors, [41]);
  assert.deepEqual(hints('SELECT x; -- { serverError ILLEGAL_TYPE_OF_ARGUMENT (43) }').errors, [43]);
  assert.deepEqual(hints('SELECT x; -- { serverError 43, 44 }').errors, [43, 44]);
  assert.deepEqual(hints('SELECT x; -- { clientError 0 serverError 47 }').errors, [0, 47]);
  assert.deepEqual(hints('SELECT x; -- { clientError SYNTAX_ERROR }').errors, [62]);
  assert.deepEqual(hints('SELECT x; -- { serverError 47 } -- not enough arguments').errors, [47]);
  assert.deepEqual(hints('SELECT x;').errors, []);
  // inside the statement (before the semicolon) counts too
  assert.deepEqual(hints('SELECT x -- { serverError 47 }\n;').errors, [47]);
  // an unknown name is reported, not guessed
  assert.deepEqual(hints('SELECT x; -- { serverError NO_SUCH_ERROR_NAME }').unknownNames, [
    'NO_SUCH_ERROR_NAME',
  ]);
});

test('error hints in leading comments do not count; echo hints do', () => {
  const [first, second] = splitScript(
    '-- { serverError 47 }\nSELECT 1;\n-- { echoOn }\nSELECT 2; -- { echoOff }',
  );
  assert.deepEqual(hintsOf(first!).errors, []);
  assert.equal(hintsOf(first!).echo, undefined);
  // the last word wins: echoOn in the leading text, echoOff after it on the line
  assert.equal(hintsOf(second!).echo, false);
  assert.equal(hintsOf(splitScript('-- { echo }\nSELECT 1;')[0]!).echo, true);
});
