import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { confinedPath } from '../../src/dictionaries/dictionary-source.ts';
import { maskedDictionaryQuery } from '../../src/dictionaries/masked-query.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import type { CreateDictionary } from '../../src/sql/ast/statement.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';
import { dictionaryLifetime, translateCreateDictionary } from '../../src/sql/translator/dictionary-ddl.ts';

const parse = (sql: string) => parseStatement(sql) as CreateDictionary;
const code = (f: () => unknown): number => {
  try {
    f();
  } catch (e) {
    if (isTributaryError(e)) return e.code;
    throw e;
  }
  return 0;
};

test('the engine form: types and DEFAULT in the engine dialect, the vetted source, a default layout and lifetime', () => {
  const s = parse(
    "CREATE DICTIONARY d (k uint64, v string DEFAULT to_string(1), w float64) PRIMARY KEY k SOURCE(TIMEPLUS(STREAM 's'))",
  );
  const source = { kind: 'DictionaryCall', name: 'CLICKHOUSE', args: [], span: s.span } as const;
  const sql = translateCreateDictionary(s, { database: 'db1', source, replace: false });
  assert.equal(
    sql,
    'CREATE DICTIONARY db1.d (k UInt64, v String DEFAULT toString(1), w Float64) PRIMARY KEY k SOURCE(CLICKHOUSE()) LAYOUT(HASHED()) LIFETIME(MIN 0 MAX 0)',
  );
  const composite = parse(
    "CREATE OR REPLACE DICTIONARY d (a string, b int32, v string) PRIMARY KEY a, b SOURCE(TIMEPLUS(STREAM 's')) LIFETIME(30)",
  );
  assert.match(
    translateCreateDictionary(composite, { database: 'default', source, replace: true }),
    /^CREATE OR REPLACE DICTIONARY .* LAYOUT\(COMPLEX_KEY_HASHED\(\)\) LIFETIME\(MIN 0 MAX 30\)$/,
  );
});

test('LIFETIME: n is [0, n]; MIN above MAX, or not a whole number, is refused', () => {
  const base = "CREATE DICTIONARY d (k uint64) PRIMARY KEY k SOURCE(TIMEPLUS(STREAM 's'))";
  assert.deepEqual(dictionaryLifetime(parse(base)), { min: 0, max: 0 });
  assert.deepEqual(dictionaryLifetime(parse(`${base} LIFETIME(300)`)), { min: 0, max: 300 });
  assert.deepEqual(dictionaryLifetime(parse(`${base} LIFETIME(MIN 5 MAX 10)`)), { min: 5, max: 10 });
  assert.equal(
    code(() => dictionaryLifetime(parse(`${base} LIFETIME(MIN 10 MAX 5)`))),
    36,
  );
  assert.equal(
    code(() => dictionaryLifetime(parse(`${base} LIFETIME(1.5)`))),
    36,
  );
});

test('a FILE path is confined to the user files directory, links followed', () => {
  const root = mkdtempSync(join(tmpdir(), 'dict-path-'));
  const dir = join(root, 'user_files');
  mkdirSync(join(dir, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'sub', 'a.csv'), '1\n');
  writeFileSync(join(root, 'secret.csv'), '1\n');
  symlinkSync(join(root, 'secret.csv'), join(dir, 'out.csv'));
  symlinkSync(join(dir, 'sub', 'a.csv'), join(dir, 'in.csv'));
  assert.equal(confinedPath('d', 'sub/a.csv', dir).endsWith(join('sub', 'a.csv')), true);
  assert.equal(confinedPath('d', join(dir, 'sub', 'a.csv'), dir).endsWith('a.csv'), true);
  assert.equal(confinedPath('d', 'in.csv', dir).endsWith(join('sub', 'a.csv')), true);
  for (const p of ['../secret.csv', join(root, 'secret.csv'), 'out.csv', 'sub/../../secret.csv', '.', ''])
    assert.equal(
      code(() => confinedPath('d', p, dir)),
      291,
      p,
    );
  assert.equal(
    code(() => confinedPath('d', 'missing.csv', dir)),
    11601,
  );
});

test('passwords are masked in the statement shown back, the rest stays as written', () => {
  const sql =
    "CREATE DICTIONARY d (k uint64) PRIMARY KEY k SOURCE(HTTP(url 'http://x/' format 'TSV' credentials(user 'u' password 'p@ss'))) -- note";
  assert.equal(
    maskedDictionaryQuery(sql),
    "CREATE DICTIONARY d (k uint64) PRIMARY KEY k SOURCE(HTTP(url 'http://x/' format 'TSV' credentials(user 'u' password '******'))) -- note",
  );
  const local =
    "CREATE DICTIONARY d (k uint64) PRIMARY KEY k SOURCE(TIMEPLUS(STREAM 's' USER 'a' PASSWORD 'b'))";
  assert.match(maskedDictionaryQuery(local), /PASSWORD '\*\*\*\*\*\*'\)\)$/);
});
