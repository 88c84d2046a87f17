/**
 * Writes the table of Proton's functions (every name of test/fixtures/proton/proton-functions.txt,
 * supported or not, and how) into docs/sql-reference.md between its two markers. Run it after a
 * change to the function map: test/unit/proton-function-table.test.ts fails while the doc is stale.
 *
 *   node --import tsx scripts/generate-function-table.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { functionTableSection, replaceFunctionTable } from './function-table-doc.ts';

const doc = fileURLToPath(new URL('../docs/sql-reference.md', import.meta.url));
const before = readFileSync(doc, 'utf8');
const after = replaceFunctionTable(before, functionTableSection());
if (after === before) {
  console.log('docs/sql-reference.md: function table up to date');
} else {
  writeFileSync(doc, after);
  console.log('docs/sql-reference.md: function table written');
}
