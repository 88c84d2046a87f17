import assert from 'node:assert/strict';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import type { TableResolver } from '../../src/sql/translator/resolver.ts';
import { translate } from '../../src/sql/translator/translate.ts';

/** The error `sql` is refused with by the translator (fails the test when it translates). */
export function translateRefusal(
  sql: string,
  resolver: TableResolver,
): { code: number; status: number; message: string } {
  try {
    translate(sql, { resolver });
  } catch (e) {
    assert.ok(isTributaryError(e), `${sql}: ${String(e)}`);
    return { code: e.code, status: e.status, message: e.message };
  }
  assert.fail(`${sql} was translated`);
}
