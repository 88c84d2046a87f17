/**
 * Every SQL statement of the Proton smoke suite (`query` of `python`-client statements in
 * /work/shared/conformance/proton-smoke, JSON and YAML) must parse, and print back to text that
 * parses to the same AST (spans aside), in both the pretty and the one-line layout.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { sameTree } from '../../src/sql/ast/compare.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';
import { print } from '../../src/sql/printer/format.ts';
import { isSqlSyntaxError } from '../../src/sql/syntax/syntax-error.ts';

const CORPUS = '/work/shared/conformance/proton-smoke';

/**
 * Statements of the corpus that are not valid SQL in Proton either (typos in the original suite;
 * their steps have no query_id, so the original runner never checked them). They must fail with
 * a syntax error, at the position given.
 */
const KNOWN_MALFORMED: Record<string, string> = {
  'create  materialized view if not exists test14_view as (': '1:57',
  "insert into rename_column_stream (id, name, val ) values (5, 's5', 55.5": '1:72',
};

interface Found {
  file: string;
  query: string;
}

function collect(): Found[] {
  const out: Found[] = [];
  for (const file of readdirSync(CORPUS).sort()) {
    const text = readFileSync(join(CORPUS, file), 'utf8');
    const doc = file.endsWith('.json')
      ? JSON.parse(text)
      : file.endsWith('.yaml') || file.endsWith('.yml')
        ? parseYaml(text)
        : undefined;
    if (!doc) continue;
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (o.client === 'python' && typeof o.query === 'string') out.push({ file, query: o.query });
        for (const x of Object.values(o)) visit(x);
      }
    };
    visit(doc);
  }
  return out;
}

const statements = collect();

test('the corpus has the statements the notes count (sanity)', () => {
  assert.ok(statements.length > 7000, `only ${statements.length} statements found`);
});

test('every python-client statement of the smoke suite parses', () => {
  const failures: string[] = [];
  for (const { file, query } of statements) {
    const known = KNOWN_MALFORMED[query];
    try {
      parseStatement(query);
      if (known) failures.push(`${file}: expected a syntax error for ${JSON.stringify(query)}`);
    } catch (e) {
      if (!isSqlSyntaxError(e)) throw e;
      if (known === `${e.line}:${e.column}`) continue;
      failures.push(`${file}: ${e.message}\n    ${query.replace(/\s+/g, ' ').slice(0, 300)}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} statements failed to parse:\n${failures.join('\n')}`);
});

test('print/parse round-trips every statement (pretty and one-line)', () => {
  const failures: string[] = [];
  const seen = new Set<string>();
  for (const { file, query } of statements) {
    if (seen.has(query) || KNOWN_MALFORMED[query]) continue;
    seen.add(query);
    const ast = parseStatement(query);
    for (const pretty of [true, false]) {
      const text = print(ast, { pretty });
      let again: unknown;
      try {
        again = parseStatement(text);
      } catch (e) {
        failures.push(`${file}: printed text does not parse (${(e as Error).message}):\n${text}`);
        continue;
      }
      if (!sameTree(ast, again))
        failures.push(`${file}: round trip changed the AST:\n  ${query}\n  => ${text}`);
    }
  }
  assert.deepEqual(failures, [], failures.join('\n'));
});
