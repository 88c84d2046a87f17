/**
 * docs/sql-reference.md, "Not supported yet", stays true: every statement listed there answers
 * NOT_IMPLEMENTED (code 48) when run; one that starts working fails here, so it moves to the
 * supported syntax.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
  const made = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'CREATE STREAM s (a int)', type: 'ddl' },
  });
  assert.equal(made.statusCode, 204, made.body);
});
after(() => h.close());

async function notSupported(): Promise<string[]> {
  const text = await readFile(new URL('../../docs/sql-reference.md', import.meta.url), 'utf8');
  const block = /<!-- not-supported:start -->\n```sql\n([\s\S]*?)```\n<!-- not-supported:end -->/.exec(
    text,
  )?.[1];
  assert.ok(block, 'the SQL reference has its "Not supported yet" block');
  return block
    .split('\n')
    .map((l) => l.trim().replace(/;$/, ''))
    .filter((l) => l.length > 0);
}

test('every statement the SQL reference lists as not supported yet answers code 48', async () => {
  const statements = await notSupported();
  // A sanity check that the block was read whole (it shrinks as statements become supported).
  assert.ok(statements.length >= 5, `${statements.length} statements`);
  for (const sql of statements) {
    // /queries detects the kind (on /exec, `type` would refuse SHOW or EXPLAIN as "ddl" first).
    const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
    assert.equal(r.statusCode, 400, `${sql}: ${r.statusCode} ${r.body}`);
    assert.equal((r.json() as { code: number }).code, ERRORS.NOT_IMPLEMENTED.code, `${sql}: ${r.body}`);
  }
});
