/**
 * The SETTINGS clause the engine adapter appends: user-derived SQL gets `readonly = 1` joined to
 * its own trailing clause (a second clause would be checked under readonly and refused), and only
 * a real trailing clause counts (not the word inside a string, an identifier or a subquery).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { endsInSettingsClause, withSettings } from '../../src/engine/settings-clause.ts';

test('a statement ending in its own SETTINGS clause is recognised; quoted text and subqueries are not', () => {
  assert.ok(endsInSettingsClause('SELECT 1 SETTINGS max_threads = 1'));
  assert.ok(endsInSettingsClause("SELECT 1 SETTINGS join_algorithm = 'hash'"));
  assert.ok(!endsInSettingsClause("SELECT * FROM t WHERE b = 'no SETTINGS here'"));
  assert.ok(!endsInSettingsClause("SELECT 'it\\'s SETTINGS a'"));
  assert.ok(!endsInSettingsClause('SELECT `SETTINGS x` FROM t'));
  assert.ok(!endsInSettingsClause('SELECT * FROM (SELECT 1 SETTINGS max_threads = 1)'));
  assert.ok(!endsInSettingsClause('SELECT 1 -- SETTINGS x = 1'));
});

test('merge joins the clause; without merge (or without a clause) a new one is appended', () => {
  assert.equal(
    withSettings('SELECT 1 SETTINGS max_threads = 1', { readonly: 1 }, { merge: true }),
    'SELECT 1 SETTINGS max_threads = 1, readonly = 1',
  );
  assert.equal(
    withSettings("SELECT 'SETTINGS'", { readonly: 1 }, { merge: true }),
    "SELECT 'SETTINGS'\nSETTINGS readonly = 1",
  );
  assert.equal(
    withSettings('SELECT 1 SETTINGS max_threads = 1', { readonly: 1 }),
    'SELECT 1 SETTINGS max_threads = 1\nSETTINGS readonly = 1',
  );
});
