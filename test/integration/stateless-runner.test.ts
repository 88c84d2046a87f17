// `npm run stateless` end to end: the runner starts a real Tributary (bin/tributary.mjs serve on
// chDB) and runs a directory of tiny cases written here: results in TabSeparated, an expected error
// (by code and by name), a SET carried to the next statement, FORMAT, echo mode, a stream created
// by two cases in turn (each case starts clean), a wrong reference (FAIL with its first differing
// line), an unexpected error, a query that never ends (cut by the time limit), and the JSON report.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';

const repoRoot = resolve(import.meta.dirname, '../..');
let dir: string;

const CASES: Record<string, [sql: string, reference: string]> = {
  a_values: [
    "SELECT 1, 'a\\tb', [1, 2], NULL, ('x', 2.5);\nSELECT 'second';\n",
    "1\ta\\tb\t[1,2]\t\\N\t('x',2.5)\nsecond\n",
  ],
  b_errors: [
    [
      'SELECT 1;',
      'SELECT no_such_column FROM (SELECT 1 AS a); -- { serverError 47 }',
      'SELECT no_such_column FROM (SELECT 1 AS a); -- { serverError UNKNOWN_IDENTIFIER }',
      "SELEC 'syntax'; -- { clientError SYNTAX_ERROR }",
      'SELECT 2;',
    ].join('\n'),
    '1\n2\n',
  ],
  c_set: [
    [
      'SELECT r.b FROM (SELECT 1 AS a) AS l LEFT JOIN (SELECT 2 AS a, 5 AS b) AS r ON l.a = r.a;',
      'SET join_use_nulls = 1;',
      'SELECT r.b FROM (SELECT 1 AS a) AS l LEFT JOIN (SELECT 2 AS a, 5 AS b) AS r ON l.a = r.a;',
      'SET max_memory_usage = 0; -- { serverError 164 }',
    ].join('\n'),
    '0\n\\N\n',
  ],
  d_formats: [
    "SELECT 1 AS a, 'x' AS b FORMAT TSVWithNames;\nSELECT 1 AS a, 'x,y' AS b FORMAT CSV;\nSELECT 3 FORMAT Null;\n",
    'a\tb\n1\tx\n1,"x,y"\n',
  ],
  e_echo: [
    "SELECT 'quiet';\n-- { echoOn }\nSELECT 'loud'; -- said aloud\n-- { echoOff }\nSELECT 'quiet again';\n",
    "quiet\n-- { echoOn }\nSELECT 'loud'; -- said aloud\nloud\nquiet again\n",
  ],
  f_stream_first: [
    'CREATE STREAM shared_name (a int);\nINSERT INTO shared_name (a) VALUES (1), (2);\nSELECT sum(a) FROM shared_name;\n',
    '3\n',
  ],
  g_stream_again: [
    'CREATE STREAM shared_name (a int);\nINSERT INTO shared_name (a) VALUES (10);\nSELECT sum(a) FROM shared_name;\n',
    '10\n',
  ],
  h_wrong_reference: ['SELECT 1;\nSELECT 2;\n', '1\n3\n'],
  i_unexpected_error: ["SELECT 1;\nSELECT to_int32('not a number');\nSELECT 2;\n", '1\n2\n'],
  j_never_ends: [
    "CREATE STREAM endless (a int);\nSET query_mode = 'streaming';\nSELECT a FROM endless;\n",
    '',
  ],
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tributary-stateless-'));
  for (const [name, [sql, reference]] of Object.entries(CASES)) {
    writeFileSync(join(dir, `${name}.sql`), sql);
    writeFileSync(join(dir, `${name}.reference`), reference);
  }
  // a script without a reference is skipped
  writeFileSync(join(dir, 'k_no_reference.sql'), 'SELECT 1;\n');
});

after(() => rmSync(dir, { recursive: true, force: true }));

function runRunner(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/stateless.ts', ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

test('the runner runs a directory of cases and reports each, the summary and JSON', async () => {
  const json = join(dir, 'report.json');
  const r = await runRunner([dir, '--json', json, '--timeout', '8']);
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  const lines = r.stdout.split('\n').filter((l) => /^(PASS|FAIL|SKIP) /.test(l));
  const byName = new Map(lines.map((l) => [l.split(' ')[1], l]));
  for (const name of [
    'a_values',
    'b_errors',
    'c_set',
    'd_formats',
    'e_echo',
    'f_stream_first',
    'g_stream_again',
  ]) {
    assert.equal(byName.get(name), `PASS ${name}`, r.stdout);
  }
  assert.match(
    byName.get('h_wrong_reference') ?? '',
    /^FAIL h_wrong_reference output line 2: expected "3", got "2"$/,
  );
  assert.match(byName.get('i_unexpected_error') ?? '', /^FAIL i_unexpected_error line 2: error \d+: /);
  assert.match(byName.get('j_never_ends') ?? '', /^FAIL j_never_ends line 3: timed out after 8s/);
  assert.match(byName.get('k_no_reference') ?? '', /^SKIP k_no_reference no \.reference file/);
  assert.match(r.stdout, /\n7 passed, 3 failed, 1 skipped\n/);

  const report = JSON.parse(readFileSync(json, 'utf8')) as {
    total: { passed: number; failed: number; skipped: number };
    cases: Array<{ name: string; status: string; firstDifference?: unknown; error?: { code: number } }>;
  };
  assert.deepEqual(report.total, { passed: 7, failed: 3, skipped: 1 });
  const wrong = report.cases.find((c) => c.name === 'h_wrong_reference');
  assert.deepEqual(wrong?.firstDifference, { line: 2, expected: '3', actual: '2' });
  const unexpected = report.cases.find((c) => c.name === 'i_unexpected_error');
  assert.equal(typeof unexpected?.error?.code, 'number');
});

test('--only picks cases by name; a bad option is a usage error', async () => {
  const r = await runRunner([dir, '--only', 'a_values']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^PASS a_values$/m);
  assert.match(r.stdout, /\n1 passed, 0 failed, 0 skipped\n/);
  const bad = await runRunner([dir, '--jobs', '0']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--jobs must be a whole number/);
});
