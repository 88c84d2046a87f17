/**
 * Proton's whole function list (test/fixtures/proton/proton-functions.txt, every name registered in
 * Proton's source): each name resolves to the engine, is mapped by Tributary, is a type name, or is
 * refused with a reason. A new name in the list, or a name that stops resolving, fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { resolveFunctionName } from '../../src/sql/names/function-catalog.ts';
import {
  MAPPED_PROTON_ONLY,
  NOT_FUNCTION_NAMES,
  UNSUPPORTED_PROTON_FUNCTIONS,
} from '../../src/sql/names/proton-only-functions.ts';
import { protonFunctionStatus } from '../../src/sql/translator/proton-function-status.ts';

const names = readFileSync(new URL('../fixtures/proton/proton-functions.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.length > 0 && !l.startsWith('#'));

/** The classification docs/sql-reference.md's function table prints (proton-function-status.ts). */
function classify(name: string): string | undefined {
  return protonFunctionStatus(name)?.kind;
}

test("every name of Proton's function list is accounted for", () => {
  assert.ok(names.length > 1200, `${names.length} names`);
  assert.deepEqual(
    names.filter((n) => classify(n) === undefined),
    [],
    'map or refuse these in src/sql/names/proton-only-functions.ts',
  );
});

test('the refusal lists hold only names of the list that resolve no other way', () => {
  const listed = new Set(names);
  for (const n of [
    ...UNSUPPORTED_PROTON_FUNCTIONS.keys(),
    ...NOT_FUNCTION_NAMES.keys(),
    ...MAPPED_PROTON_ONLY,
  ]) {
    assert.ok(listed.has(n), `${n} is not in Proton's list`);
    assert.ok(!resolveFunctionName(n), `${n} resolves to the engine: drop it from the refusals`);
  }
});
