// The conformance runner end to end against a fake server that speaks Tributary's query contract
// (test/helpers/fake-tributary.ts): statements, background streaming queries, depends_on, inputs,
// kill, `kill query` SQL, query_end_timer, error codes, retries, time limits, and no leaks.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { TributaryApi } from '../../scripts/conformance/api-client.ts';
import { parseSuite, type SuiteFile } from '../../scripts/conformance/case-file.ts';
import { runCase } from '../../scripts/conformance/case-runner.ts';
import type { CaseReport } from '../../scripts/conformance/report.ts';
import { runSuite } from '../../scripts/conformance/suite-runner.ts';
import { FakeTributary } from '../helpers/fake-tributary.ts';

const fake = new FakeTributary('admin', 'password1');
let api: TributaryApi;

before(async () => {
  await fake.start();
  api = new TributaryApi(fake.baseUrl, { user: 'admin', password: 'password1' });
});

after(async () => {
  api.closeAll();
  await fake.stop();
});

const py = (query: string, extra: Record<string, unknown> = {}) => ({
  client: 'python',
  query_type: 'table',
  query,
  ...extra,
});
const stream = (id: string, query: string, extra: Record<string, unknown> = {}) => ({
  client: 'python',
  query_type: 'stream',
  query_id: id,
  query,
  ...extra,
});
const createS = [py('drop stream if exists s'), py('create stream s (id int32, v float64)')];

function suiteOf(tests: unknown[], config: Record<string, unknown> = {}): SuiteFile {
  const doc = {
    test_suite_name: 'fake',
    test_suite_config: { tests_2_run: { ids_2_run: ['all'], tags_2_skip: { default: ['todo'] } }, ...config },
    tests,
  };
  return parseSuite(JSON.stringify(doc), 'fake_suite.json');
}

async function runOne(testCase: unknown, timeoutS = 30) {
  const suite = suiteOf([testCase]);
  return runCase({ api, suite, case: suite.cases[0]!, timeoutS });
}

function assertNoLeaks() {
  assert.equal(api.openRequests, 0, 'the runner left requests open');
  assert.equal(fake.runningQueries, 0, 'the runner left queries running');
}

test('a streaming query sees the ingested rows; kill after the input stops it; rows compared', async () => {
  const outcome = await runOne({
    id: 1,
    tags: [],
    steps: [
      { statements: [...createS, stream('101', 'select * from s', { depends_on_stream: 's' })] },
      {
        inputs: [
          {
            table_name: 's',
            columns: ['id', 'v'],
            depends_on: '101',
            data: [
              [1, 1.5],
              [2, 2.5],
            ],
            kill: '101',
            kill_wait: 1,
          },
        ],
      },
    ],
    expected_results: [
      {
        query_id: '101',
        expected_results: [
          [2, '2.5'],
          [1, 1.501],
        ],
      },
    ],
  });
  assert.equal(outcome.status, 'pass', outcome.details.join('\n'));
  assertNoLeaks();
});

test('a mismatch fails with a diff of the rows', async () => {
  const outcome = await runOne({
    id: 2,
    tags: [],
    steps: [
      { statements: [...createS, stream('101', 'select * from s')] },
      {
        inputs: [{ table_name: 's', columns: ['id', 'v'], depends_on: '101', data: [[1, 1.5]], kill: '101' }],
      },
    ],
    expected_results: [{ query_id: '101', expected_results: [[1, 9.5]] }],
  });
  assert.equal(outcome.status, 'fail');
  assert.match(outcome.summary ?? '', /query 101: 1 of 1 expected rows not matched/);
  assert.ok(outcome.details.some((d) => d.includes('missing') && d.includes('9.5')));
  assert.ok(outcome.details.some((d) => d.includes('unexpected') && d.includes('1.5')));
  assertNoLeaks();
});

test('error_code expectations compare the code of a JSON error and of a query that fails while streaming', async () => {
  const outcome = await runOne({
    id: 3,
    tags: [],
    steps: [
      {
        statements: [
          ...createS,
          py('select error', { query_id: '201' }),
          stream('202', 'select * from s fail after 300'),
          py('select * from table(s)', { query_id: '203', depends_on: '202', wait: 1 }),
        ],
      },
    ],
    expected_results: [
      { query_id: '201', expected_results: 'error_code:47' },
      { query_id: '202', expected_results: 'error_code:42' },
      { query_id: '203', expected_results: [] },
    ],
  });
  assert.equal(outcome.status, 'pass', outcome.details.join('\n'));
  assertNoLeaks();
});

test('`kill query where query_id` SQL stops the case query through the cancel route', async () => {
  const outcome = await runOne({
    id: 4,
    tags: [],
    steps: [
      { statements: [...createS, stream('301', 'select * from s')] },
      { inputs: [{ table_name: 's', columns: ['id', 'v'], depends_on: '301', data: [[7, 0.5]] }] },
      {
        statements: [
          py("kill query where query_id = '301'", { wait: 1 }),
          py('select * from table(s)', { query_id: '302' }),
        ],
      },
    ],
    expected_results: [
      { query_id: '301', expected_results: [[7, 0.5]] },
      { query_id: '302', expected_results: [[7, 'any_value']] },
    ],
  });
  assert.equal(outcome.status, 'pass', outcome.details.join('\n'));
  assert.ok(!fake.sqlLog.some((s) => s.startsWith('kill query')), 'kill query must not reach the server');
  assertNoLeaks();
});

test('queries still running at the end of the case are stopped after their query_end_timer', async () => {
  const outcome = await runOne({
    id: 5,
    tags: [],
    steps: [
      { statements: [...createS, stream('401', 'select * from s', { query_end_timer: 1 })] },
      { inputs: [{ table_name: 's', columns: ['v', 'id'], depends_on: '401', data: [[3.25, 9]] }] },
    ],
    expected_results: [{ query_id: '401', expected_results: [[9, 3.25]] }],
  });
  assert.equal(outcome.status, 'pass', outcome.details.join('\n'));
  assertNoLeaks();
});

test('a case that hangs times out and leaves nothing open', async () => {
  const outcome = await runOne(
    {
      id: 6,
      tags: [],
      steps: [{ statements: [py('select hang', { query_id: '1' })] }],
      expected_results: [],
    },
    2,
  );
  assert.equal(outcome.status, 'fail');
  assert.match(outcome.summary ?? '', /timed out after 2s/);
  assertNoLeaks();
});

test('a failed ingest fails the case', async () => {
  const outcome = await runOne({
    id: 7,
    tags: [],
    steps: [{ statements: createS }, { inputs: [{ table_name: 's', columns: ['zzz'], data: [[1]] }] }],
    expected_results: [],
  });
  assert.equal(outcome.status, 'fail');
  assert.match(outcome.summary ?? '', /ingest into s: HTTP 400 code 16: No such column zzz/);
  assertNoLeaks();
});

test('runSuite: skips by tag, creates table_schemas, retries a failing case and reports the attempts', async () => {
  const suite = suiteOf(
    [
      { id: 'a', tags: ['todo'], steps: [], expected_results: [] },
      {
        id: 'b',
        tags: [],
        steps: [{ statements: [py('select flaky', { query_id: '1' })] }],
        expected_results: [{ query_id: '1', expected_results: [[1]] }],
      },
      {
        id: 'c',
        tags: [],
        steps: [
          { statements: [stream('9', 'select * from dim')] },
          { inputs: [{ table_name: 'dim', depends_on: '9', data: [['k1', 1]], kill: '9' }] },
        ],
        expected_results: [{ query_id: '9', expected_results: [['k1', 1]] }],
      },
    ],
    {
      table_schemas: [
        {
          name: 'dim',
          type: 'table',
          columns: [
            { name: 'k', type: 'string' },
            { name: 'n', type: 'int32' },
          ],
        },
      ],
    },
  );
  const reports: CaseReport[] = [];
  await runSuite({ api, retries: 2, timeoutS: 30, warn: () => {} }, suite, suite.cases, (r) =>
    reports.push(r),
  );
  assert.deepEqual(
    reports.map((r) => [r.id, r.status, r.attempts]),
    [
      ['a', 'skip', 0],
      ['b', 'pass', 2],
      ['c', 'pass', 1],
    ],
  );
  assert.match(reports[0]!.reason ?? '', /tag 'todo' in tags_2_skip.default/);
  assert.ok(
    fake.sqlLog.includes('create stream dim (k string, n int32)'.replace('create stream', 'CREATE STREAM')),
  );
  assertNoLeaks();
});

test('npm run conformance: one line per case, summary last line, JSON file, exit code 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-cli-'));
  try {
    const doc = {
      test_suite_name: 'cli',
      test_suite_config: { tests_2_run: { ids_2_run: ['all'], tags_2_skip: { default: ['todo'] } } },
      tests: [
        {
          id: 0,
          tags: [],
          steps: [{ statements: [py('select error', { query_id: '1' })] }],
          expected_results: [{ query_id: '1', expected_results: 'error_code:47' }],
        },
        {
          id: 1,
          tags: [],
          steps: [{ statements: [py('select error', { query_id: '1' })] }],
          expected_results: [{ query_id: '1', expected_results: [] }],
        },
        { id: 2, tags: ['todo'], steps: [], expected_results: [] },
      ],
    };
    writeFileSync(join(dir, '0001_cli.json'), JSON.stringify(doc));
    const jsonPath = join(dir, 'out.json');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'scripts/conformance.ts',
        dir,
        '--url',
        `http://127.0.0.1:${fake.port}`,
        '--password',
        'password1',
        '--retries',
        '0',
        '--json',
        jsonPath,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], cwd: resolve(import.meta.dirname, '../..') },
    );
    let stdout = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0, stdout);
    const lines = stdout.trim().split('\n');
    assert.ok(lines.includes('0001_cli 0: pass'), stdout);
    assert.ok(
      lines.some((l) => l.startsWith('0001_cli 1: fail (query 1: expected 0 rows, got error_code:47')),
      stdout,
    );
    assert.ok(lines.includes("0001_cli 2: skip (tag 'todo' in tags_2_skip.default)"), stdout);
    assert.equal(lines[lines.length - 1], '1 passed, 1 failed, 1 skipped');
    const json = JSON.parse(readFileSync(jsonPath, 'utf8'));
    assert.deepEqual(json.total, { suite: 'total', passed: 1, failed: 1, skipped: 1, passedAfterRetry: 0 });
    assert.equal(json.cases.length, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
