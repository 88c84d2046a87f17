/**
 * docs/sql-reference.md's table of Proton's functions is the one the classification of
 * src/sql/translator/proton-function-status.ts prints today (regenerate it with
 * `node --import tsx scripts/generate-function-table.ts`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { currentFunctionTable, functionTableSection } from '../../scripts/function-table-doc.ts';

test('the function table of docs/sql-reference.md is in sync with the function map', () => {
  const doc = readFileSync(new URL('../../docs/sql-reference.md', import.meta.url), 'utf8');
  const table = currentFunctionTable(doc);
  assert.ok(table !== undefined, 'docs/sql-reference.md has no generated function table');
  assert.equal(
    table,
    functionTableSection(),
    'stale: run node --import tsx scripts/generate-function-table.ts',
  );
});

test('every name of the list has a row, and the supported ones say how they run', () => {
  const table = functionTableSection();
  const rows = table.split('\n').filter((l) => l.startsWith('| `'));
  assert.ok(rows.length > 1200, `${rows.length} rows`);
  assert.ok(!rows.some((r) => r.includes('| unknown |')), 'every name is classified');
  assert.ok(rows.includes("| `json_values` | yes | mapped: Proton's meaning |"));
  assert.ok(rows.includes('| `to_string` | yes | engine: toString |'));
  assert.ok(rows.some((r) => r.startsWith('| `grok` | no | refused: ')));
});
