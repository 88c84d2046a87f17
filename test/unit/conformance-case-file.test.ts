// The case loader and what the runner derives from case files: every file of the corpus loads, the
// counts, case selection and skip reasons, the mapped REST statements, CREATE STREAM from
// table_schemas, the per-case stream reset, and the wait bookkeeping.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import {
  caseIdText,
  escapeControlCharsInStrings,
  listOf,
  loadSuites,
  parseSuite,
  type StepItem,
  textOf,
} from '../../scripts/conformance/case-file.ts';
import { caseTimeoutS, maxWaitOf, scriptedSeconds } from '../../scripts/conformance/case-runner.ts';
import { caseSkipReason } from '../../scripts/conformance/case-selection.ts';
import { inputColumns } from '../../scripts/conformance/input-ingest.ts';
import { mapRestStatement } from '../../scripts/conformance/rest-mapping.ts';
import { createStreamSql, resetPlan } from '../../scripts/conformance/schema-setup.ts';
import { killQueryTarget } from '../../scripts/conformance/statement-runner.ts';

// Beside the repository, as the runner expects it; else where the other corpus tests read it (a
// clean clone elsewhere, as CI makes one).
const CORPUS =
  [
    resolve(import.meta.dirname, '../../../shared/conformance/proton-smoke'),
    '/work/shared/conformance/proton-smoke',
  ].find((dir) => existsSync(dir)) ?? '';
const haveCorpus = CORPUS !== '';

test('every file of the corpus loads: 76 suites, 873 cases', {
  skip: !haveCorpus && 'corpus not present',
}, () => {
  const { suites, errors } = loadSuites(CORPUS);
  assert.deepEqual(errors, []);
  assert.equal(suites.length, 76);
  assert.equal(
    suites.reduce((n, s) => n + s.cases.length, 0),
    873,
  );
  const count = (file: string) => suites.find((s) => s.file === file)?.cases.length;
  assert.equal(count('0000_smoke_case.json'), 36);
  assert.equal(count('0020_seek_to.json'), 14);
  assert.equal(count('0029_emit_changelog.yaml'), 7);
  assert.equal(count('0034_emit_mode.yaml'), 3);
  assert.equal(count('0099_fixed_issues.json'), 24);
  // the same stem in json and yaml keeps the extension in reports; other labels are the stem
  const labels = suites.map((s) => s.label);
  assert.ok(labels.includes('0013_changelog_stream3.json'));
  assert.ok(labels.includes('0013_changelog_stream3.yaml'));
  assert.ok(labels.includes('0000_smoke_case'));
  assert.equal(new Set(labels).size, labels.length);
  // every case has steps and an id; query ids of expectations are found among the statements
  for (const s of suites) {
    for (const c of s.cases) {
      assert.ok(Array.isArray(c.steps), `${s.file} ${caseIdText(c)}`);
    }
  }
});

test('selection over the corpus: 715 cases run, 158 are skipped with their reason', {
  skip: !haveCorpus && 'corpus not present',
}, () => {
  const { suites } = loadSuites(CORPUS);
  const reasons = new Map<string, number>();
  let run = 0;
  for (const s of suites) {
    for (const c of s.cases) {
      const r = caseSkipReason(s, c);
      if (r === undefined) run++;
      else {
        const kind = r.startsWith('tag ')
          ? 'tag'
          : r.startsWith('suite runs only')
            ? 'settings'
            : r.startsWith('rest ')
              ? 'rest'
              : r.startsWith('exec')
                ? 'exec'
                : r;
        reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
      }
    }
  }
  assert.equal(run, 715);
  assert.deepEqual(Object.fromEntries(reasons), { tag: 140, settings: 7, rest: 10, exec: 1 });
  const smoke = suites.find((s) => s.file === '0000_smoke_case.json')!;
  const c17 = smoke.cases.find((c) => c.id === 17)!;
  assert.equal(caseSkipReason(smoke, c17), "tag 'native_not_support' in tags_2_skip.default");
  const rest = suites.find((s) => s.file === '0013_changelog_stream.json')!;
  assert.match(
    caseSkipReason(rest, rest.cases.find((c) => c.id === 2)!) ?? '',
    /rest POST \/proton\/v1\/ddl\/streams .*checked/,
  );
  // UDF creation through the original REST route maps onto POST /v1beta2/udfs: the case runs
  const udf = suites.find((s) => s.file === '0013_changelog_stream4.yaml')!;
  assert.equal(caseSkipReason(udf, udf.cases.find((c) => c.id === 5)!), undefined);
});

test('selection rules: tags_2_run, ids_2_run, suite tag and settings_to_run', () => {
  const suite = (config: object, extra: object = {}) =>
    parseSuite(
      JSON.stringify({
        test_suite_name: 'x',
        test_suite_config: config,
        tests: [
          { id: 1, tags: ['a'], steps: [] },
          { id: 2, tags: ['b'], steps: [] },
        ],
        ...extra,
      }),
      'x.json',
    );
  const reasons = (s: ReturnType<typeof suite>) => s.cases.map((c) => caseSkipReason(s, c));
  assert.deepEqual(reasons(suite({})), [undefined, undefined]);
  assert.deepEqual(reasons(suite({ tests_2_run: { ids_2_run: [2] } })), ['not in ids_2_run', undefined]);
  assert.deepEqual(reasons(suite({ tests_2_run: { ids_2_run: ['all'], tags_2_run: ['b'] } })), [
    'no tag in tags_2_run (b)',
    undefined,
  ]);
  assert.deepEqual(
    reasons(suite({ tests_2_run: { ids_2_run: ['all'], tags_2_skip: { default: ['a'], cluster: ['b'] } } })),
    ["tag 'a' in tags_2_skip.default", undefined],
  );
  assert.deepEqual(reasons(suite({}, { tag: 'skip' })), ['suite tagged skip', 'suite tagged skip']);
  assert.match(reasons(suite({ settings_to_run: ['redp'] }))[0] ?? '', /only under settings redp/);
});

test('JSON is read like Python: big integers exact, control characters in strings, last duplicate key wins', () => {
  const s = parseSuite(
    '{"test_suite_name": "x", "tests": [{"id": 1, "id": 2, "steps": [], "expected_results": [{"query_id": 1, "expected_results": [[18446744073709551615, 1.5, "a\tb"]]}]}]}',
    'x.json',
  );
  assert.equal(s.cases[0]!.id, 2);
  assert.deepEqual(s.cases[0]!.expected_results![0]!.expected_results, [
    [18446744073709551615n, 1.5, 'a\tb'],
  ]);
  assert.equal(escapeControlCharsInStrings('{"a":"x\ny"}'), '{"a":"x\\u000ay"}');
});

test('YAML is read with the 1.1 schema, as PyYAML did', () => {
  const s = parseSuite(
    [
      'test_suite_name: y',
      'tests:',
      '  - id: 0',
      '    steps: []',
      '    expected_results:',
      "      - {query_id: '1', expected_results: [[yes, 18446744073709551615, 7, '2020-01-01 00:00:00']]}",
    ].join('\n'),
    'y.yaml',
  );
  assert.deepEqual(s.cases[0]!.expected_results![0]!.expected_results, [
    [true, 18446744073709551615n, 7, '2020-01-01 00:00:00'],
  ]);
  assert.throws(() => parseSuite('tests: 3', 'z.yaml'), /`tests` is not a list/);
});

test('step item accessors: ids written as numbers, comma lists', () => {
  const item: StepItem = { query_id: 101, kill: '101,102', depends_on_stream: 's1, s2', wait: 1 };
  assert.equal(textOf(item, 'query_id'), '101');
  assert.deepEqual(listOf(item, 'kill'), ['101', '102']);
  assert.deepEqual(listOf(item, 'depends_on_stream'), ['s1', 's2']);
  assert.deepEqual(listOf({ kill: 7 }, 'kill'), ['7']);
  assert.deepEqual(listOf({}, 'kill'), []);
});

test('CREATE STREAM from a table_schemas entry (0000 and 0005 shapes)', () => {
  assert.equal(
    createStreamSql({
      name: 'test_smoke',
      type: 'table',
      columns: [
        { name: 'id', type: 'string' },
        { name: 'value', type: 'float32' },
        { name: 'timestamp', type: 'datetime64(3)', default: 'now64(3)' },
      ],
      event_time_column: 'timestamp',
    }),
    "CREATE STREAM test_smoke (id string, value float32, timestamp datetime64(3) DEFAULT now64(3)) SETTINGS event_time_column='timestamp'",
  );
  assert.equal(
    createStreamSql({
      name: 'kv',
      columns: [
        { name: 'k', type: 'string' },
        { name: 'my col', type: 'int' },
      ],
      mode: 'versioned_kv',
      primary_key: 'k',
      ttl_expression: 'to_datetime(_tp_time) + INTERVAL 1 DAY',
      shards: 3,
      query_parameters: 'storage_type=streaming',
    }),
    "CREATE STREAM kv (k string, `my col` int) PRIMARY KEY (k) TTL to_datetime(_tp_time) + INTERVAL 1 DAY SETTINGS mode='versioned_kv', shards=3, storage_type='streaming'",
  );
});

test('reset at the start of a case follows the original: with table_schemas only the first input stream', () => {
  const schemas = [
    { name: 't', columns: [{ name: 'a', type: 'int' }] },
    { name: 'd', columns: [{ name: 'b', type: 'int' }] },
  ];
  const inputs = [{ table_name: 't' }, { table_name: 'd' }, { table_name: 't' }];
  assert.deepEqual(resetPlan(inputs, schemas), ['DROP STREAM IF EXISTS t', 'CREATE STREAM t (a int)']);
  assert.deepEqual(resetPlan([{ table_name: 'x' }, { table_name: 'y' }, { table_name: 'x' }], undefined), [
    'DROP STREAM IF EXISTS x',
    'DROP STREAM IF EXISTS y',
  ]);
  assert.deepEqual(resetPlan([{ table_name: 't' }], [{ name: 't', reset: 'False' }]), []);
});

test('input columns come from the batch, else from table_schemas', () => {
  const schemas = [
    {
      name: 't',
      columns: [
        { name: 'a', type: 'int' },
        { name: 'b', type: 'int' },
      ],
    },
  ];
  assert.deepEqual(inputColumns({ table_name: 't' }, schemas), ['a', 'b']);
  assert.deepEqual(inputColumns({ table_name: 't', columns: ['b'] }, schemas), ['b']);
  assert.equal(inputColumns({ table_name: 'u' }, schemas), undefined);
});

test('rest statements that map onto Tributary, and `kill query` SQL', () => {
  assert.deepEqual(
    mapRestStatement({
      client: 'rest',
      rest_type: 'raw',
      query_url: '/proton/v1/udfs',
      http_method: 'POST',
      data: { name: 'f' },
    }),
    { kind: 'udf', body: { name: 'f' } },
  );
  assert.equal(
    mapRestStatement({
      client: 'rest',
      rest_type: 'raw',
      query_url: '/proton/v1/ddl/streams',
      http_method: 'POST',
      data: { name: 's' },
    })?.kind,
    'create-stream',
  );
  assert.equal(
    mapRestStatement({
      client: 'rest',
      rest_type: 'raw',
      query_url: '/proton/v1/sqlformat',
      http_method: 'POST',
      data: {},
    }),
    undefined,
  );
  assert.equal(killQueryTarget("kill query where query_id = '301'"), '301');
  assert.equal(killQueryTarget("kill query where query_id='1981' sync"), '1981');
  assert.equal(killQueryTarget('select 1'), undefined);
});

test('waits: max_wait of a statements step and the time limit of a case', () => {
  const st = (query_type: string, wait?: number) => ({ query_type, ...(wait !== undefined ? { wait } : {}) });
  // streaming statements raise the running figure to their wait, table statements add theirs
  assert.equal(maxWaitOf([st('table', 1), st('stream', 3), st('table', 2)]), 5);
  assert.equal(maxWaitOf([st('table', 4), st('stream', 3)]), 4);
  assert.equal(maxWaitOf([st('stream', 2), st('table', 1), st('table', 1)]), 4);
  assert.equal(maxWaitOf([{ query_type: 'table', run_mode: 'process', wait: 5 }, st('table', 1)]), 6);
  const c = parseSuite(
    JSON.stringify({
      tests: [
        {
          id: 0,
          steps: [
            { statements: [{ wait: 40, query_end_timer: 10 }] },
            { inputs: [{ table_name: 't', kill_wait: 5 }] },
          ],
        },
      ],
    }),
    'w.json',
  ).cases[0]!;
  assert.equal(scriptedSeconds(c), 55);
  assert.equal(caseTimeoutS(c, 60), 85);
  assert.equal(caseTimeoutS({ ...c, steps: [] }, 60), 60);
});
