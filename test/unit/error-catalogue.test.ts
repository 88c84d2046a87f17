import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { err } from '../../src/errors/tributary-error.ts';

interface DocRow {
  code: number;
  status: number;
  system: string;
}

function documented(): Map<string, DocRow> {
  const rows = new Map<string, DocRow>();
  const text = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const line of text.split('\n')) {
    const m = /^\| ([A-Z][A-Z0-9_]+) \| (\d+) \| (\d+) \| (\w+) \|/.exec(line);
    if (m) rows.set(m[1]!, { code: Number(m[2]), status: Number(m[3]), system: m[4]! });
  }
  return rows;
}

test('every catalogued error is documented in docs/errors.md with the same code, status and system', () => {
  const docs = documented();
  for (const [name, entry] of Object.entries(ERRORS)) {
    const row = docs.get(name);
    assert.ok(row, `${name} is missing from docs/errors.md`);
    assert.deepEqual(
      row,
      { code: entry.code, status: entry.status, system: entry.system },
      `${name} differs`,
    );
  }
});

test('docs/errors.md lists no error the catalogue does not have', () => {
  for (const name of documented().keys())
    assert.ok(name in ERRORS, `docs/errors.md lists unknown error ${name}`);
});

test("Tributary's own error codes are unique", () => {
  const seen = new Map<number, string>();
  for (const [name, entry] of Object.entries(ERRORS)) {
    if (entry.code < 10000) continue;
    assert.ok(!seen.has(entry.code), `${name} reuses code ${entry.code} of ${seen.get(entry.code)}`);
    seen.set(entry.code, name);
  }
});

test('err() fills the message template and carries status and system', () => {
  const e = err('INGEST_BAD_VALUE', { row: 3, column: 'price', detail: 'expected a number' });
  assert.equal(e.message, 'Row 3, column price: expected a number');
  assert.deepEqual(e.toBody(), {
    code: 10303,
    message: 'Row 3, column price: expected a number',
    system: 'appserver',
  });
  assert.equal(e.status, 400);
});
