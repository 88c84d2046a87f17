import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Expr, FunctionCall, Identifier } from '../../src/sql/ast/expression.ts';
import { lineColumn } from '../../src/sql/ast/span.ts';
import { childNodes, findAll, replace, transform, walk } from '../../src/sql/ast/walk.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';
import { print } from '../../src/sql/printer/format.ts';

test('walk visits every node, parents first; false skips children', () => {
  const ast = parseStatement('select f(a, b + 1) from s where c');
  const kinds: string[] = [];
  walk(ast, (n) => {
    kinds.push(n.kind);
    return n.kind === 'Binary' ? false : undefined;
  });
  assert.deepEqual(kinds, ['Select', 'Function', 'Identifier', 'Binary', 'Table', 'Identifier']);
});

test('findAll collects nodes of a kind, including inside CASE branches and EMIT', () => {
  const ast = parseStatement('select case when x then f(1) else g(2) end from s emit periodic h(3)');
  const names = findAll(ast, (n): n is FunctionCall => n.kind === 'Function').map((f) => f.name);
  assert.deepEqual(names, ['f', 'g', 'h']);
});

test('transform rebuilds bottom-up without mutating, sharing unchanged subtrees', () => {
  const ast = parseStatement('select a, b from s where a > 1');
  const renamed = transform(ast, (n) =>
    n.kind === 'Identifier' && (n as Identifier).parts[0] === 'a' ? { ...n, parts: ['x'] } : n,
  );
  assert.equal(print(renamed, { pretty: false }), 'SELECT x, b FROM s WHERE x > 1');
  assert.equal(print(ast, { pretty: false }), 'SELECT a, b FROM s WHERE a > 1');
  assert.equal(
    transform(ast, (n) => n),
    ast,
  );
});

test('replace rewrites top-down and does not enter replacements', () => {
  const ast = parseStatement('select f(f(1)) from s');
  const out = replace(ast, (n) =>
    n.kind === 'Function' ? ({ kind: 'Number', text: '0', span: n.span } satisfies Expr) : undefined,
  );
  assert.equal(print(out, { pretty: false }), 'SELECT 0 FROM s');
});

test('childNodes lists direct children', () => {
  const ast = parseStatement('select 1 + 2');
  if (ast.kind !== 'Select') throw new Error('shape');
  assert.deepEqual(
    childNodes(ast.columns[0] as Expr).map((c) => c.kind),
    ['Number', 'Number'],
  );
});

test('spans give line and column', () => {
  const text = 'select a,\n  bad_col\nfrom s';
  const ast = parseStatement(text);
  const id = findAll(
    ast,
    (n): n is Identifier => n.kind === 'Identifier' && (n as Identifier).parts[0] === 'bad_col',
  )[0];
  assert.ok(id);
  assert.deepEqual(lineColumn(text, id.span.start), { line: 2, column: 3 });
});
