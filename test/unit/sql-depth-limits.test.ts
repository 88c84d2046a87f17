/**
 * Parser and translator limits (docs/sql-reference.md, "Limits"): operator chains of any length
 * (balanced beyond CHAIN_RUN operands, so every recursive pass stays shallow), nesting bounded by
 * MAX_DEPTH with a syntax error naming the limit and the position, never a stack overflow.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyze } from '../../src/sql/analyzer/analyze.ts';
import { sameTree } from '../../src/sql/ast/compare.ts';
import type { Expr } from '../../src/sql/ast/expression.ts';
import { childNodes, findAll } from '../../src/sql/ast/walk.ts';
import { parseExpression, parseStatement } from '../../src/sql/parser/parse.ts';
import { CHAIN_RUN, MAX_DEPTH } from '../../src/sql/parser/parser-expression.ts';
import { formatSql, print } from '../../src/sql/printer/format.ts';
import { isSqlSyntaxError } from '../../src/sql/syntax/syntax-error.ts';
import type { TableResolver } from '../../src/sql/translator/resolver.ts';
import { translate } from '../../src/sql/translator/translate.ts';

const resolver: TableResolver = {
  resolve: (db, name) =>
    db === undefined && name === 's'
      ? { kind: 'stream', name: 's', engineSql: '`default`.`s`', columns: [{ name: 'a', type: 'int64' }] }
      : undefined,
};

/** Height of a tree, computed without recursion. */
function height(root: object): number {
  let max = 0;
  const stack: [object, number][] = [[root, 1]];
  while (stack.length) {
    const [n, d] = stack.pop() as [object, number];
    max = Math.max(max, d);
    for (const c of childNodes(n)) stack.push([c, d + 1]);
  }
  return max;
}

const terms = (n: number, op: string, term: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => term(i)).join(op);

test('10,000-term OR / AND / || / + chains parse into shallow trees that format, analyze and translate', () => {
  for (const [op, term] of [
    [' OR ', (i: number) => `a = ${i}`],
    [' AND ', (i: number) => `a != ${i}`],
    [' || ', () => "'x'"],
    [' + ', (i: number) => `${i}`],
  ] as const) {
    const sql = `SELECT * FROM s WHERE ${terms(10000, op, term)}`;
    const ast = parseStatement(sql);
    assert.ok(height(ast) < 60, `${op}: height ${height(ast)}`);
    assert.equal(
      findAll(ast, (n): n is Expr => n.kind === 'Binary' && (n as Expr & { op: string }).op === op.trim())
        .length,
      9999,
    );
    assert.ok(formatSql(sql).length > 0);
    assert.ok(
      sameTree(parseStatement(print(ast, { pretty: false })), parseStatement(print(ast, { pretty: true }))),
    );
    const engine = translate(ast, { resolver });
    // The engine's parser depth is not spent on the chain: parentheses nest only log-deep.
    let depth = 0;
    let deepest = 0;
    for (const ch of engine) {
      if (ch === '(') deepest = Math.max(deepest, ++depth);
      else if (ch === ')') depth--;
    }
    assert.ok(deepest < 30, `${op}: parentheses nest ${deepest} deep in the engine SQL`);
    assert.equal(analyze(sql, resolver).query_type, 'select');
  }
});

test('short chains keep the left-deep shape; a chain with - stays left-deep at any length', () => {
  const e = parseExpression(terms(CHAIN_RUN, ' OR ', (i) => `x${i}`));
  let spine = 0;
  for (let n: Expr = e; n.kind === 'Binary'; n = n.left) spine++;
  assert.equal(spine, CHAIN_RUN - 1);
  const mixed = parseExpression(terms(3000, ' - ', (i) => `${i}`));
  assert.equal(mixed.kind === 'Binary' && mixed.op, '-');
  // Balanced or not, the meaning of a + chain is the same: all operands in order.
  const long = parseExpression(terms(100, ' + ', (i) => `${i}`));
  const leaves = findAll(long, (n): n is Expr => n.kind === 'Number').map(
    (n) => (n as { text: string }).text,
  );
  assert.deepEqual(
    leaves,
    Array.from({ length: 100 }, (_, i) => String(i)),
  );
});

test('nesting beyond MAX_DEPTH is a syntax error naming the limit and the position', () => {
  for (const [label, sql] of [
    ['NOT', `SELECT ${'NOT '.repeat(2000)}1`],
    ['unary minus', `SELECT ${'- '.repeat(2000)}1`],
    ['parentheses', `SELECT ${'('.repeat(5000)}1${')'.repeat(5000)}`],
    ['arrays', `SELECT ${'['.repeat(5000)}1${']'.repeat(5000)}`],
    ['function calls', `SELECT ${'abs('.repeat(3000)}1${')'.repeat(3000)}`],
    ['subqueries', `SELECT * FROM ${'(SELECT * FROM '.repeat(2000)}s${')'.repeat(2000)}`],
    ['scalar subqueries', `SELECT ${'(SELECT '.repeat(2000)}1${')'.repeat(2000)}`],
  ]) {
    let caught: unknown;
    try {
      parseStatement(sql as string);
    } catch (e) {
      caught = e;
    }
    assert.ok(isSqlSyntaxError(caught), `${label}: ${String(caught)}`);
    assert.match(caught.message, new RegExp(`Maximum parse depth \\(${MAX_DEPTH}\\)`), label);
    assert.equal(caught.line, 1, label);
    assert.ok(caught.column > 1, label);
  }
});

test('nesting just under the limit parses, prints and translates', () => {
  const n = MAX_DEPTH - 10;
  for (const sql of [`SELECT ${'NOT '.repeat(n)}1`, `SELECT ${'('.repeat(n)}1${')'.repeat(n)}`]) {
    const ast = parseStatement(sql);
    assert.ok(sameTree(parseStatement(print(ast)), ast));
    assert.ok(translate(ast, { resolver }).length > 0);
  }
});
