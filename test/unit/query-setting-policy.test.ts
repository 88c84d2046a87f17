/**
 * Which engine settings a query may carry (src/sql/translator/query-setting-policy.ts): plan,
 * formatting, check and type-check settings pass; a limit passes only lowered; allow_* that open a
 * feature, readonly, Tributary's own settings and every door are refused with 164 naming the
 * setting and its position. Through a SETTINGS clause (the translator) and a SET (the session).
 * No engine needed; test/integration/query-settings-policy.test.ts checks the engine's side.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import { checkSessionSettings } from '../../src/queries/session-settings.ts';
import type { Setting } from '../../src/sql/ast/expression.ts';
import {
  FREE_QUERY_SETTINGS,
  isAllowedQuerySetting,
  QUERY_LIMITS,
  QUERY_RANGES,
} from '../../src/sql/translator/query-setting-policy.ts';
import { translate } from '../../src/sql/translator/translate.ts';
import { translateRefusal } from '../helpers/translate-refusal.ts';

const resolver = { resolve: () => undefined };

const refusal = (sql: string) => translateRefusal(sql, resolver);

function passes(sql: string): string {
  return translate(sql, { resolver });
}

test('plan, formatting, check and type-check settings pass to the engine as written', () => {
  for (const setting of [
    'optimize_read_in_order = 0',
    'query_plan_filter_push_down = 0',
    'convert_query_to_cnf = 1',
    'cross_to_inner_join_rewrite = 2',
    'enable_global_with_statement = 1',
    'compile_expressions = 1',
    'group_by_two_level_threshold = 1',
    'output_format_write_statistics = 0',
    'output_format_json_array_of_rows = 1',
    'input_format_csv_enum_as_number = 1',
    'force_primary_key = 1',
    "force_data_skipping_indices = 'idx'",
    'check_query_single_value_result = 0',
    'allow_suspicious_low_cardinality_types = 1',
    'allow_experimental_map_type = 1',
    'mutations_sync = 2',
    "group_by_overflow_mode = 'any'",
  ]) {
    const sql = passes(`SELECT 1 SETTINGS ${setting}`);
    assert.ok(sql.includes(setting.split(' ')[0] as string), `${setting}: ${sql}`);
  }
});

test('a limit may be lowered: a positive value no higher than the server runs with', () => {
  for (const setting of [
    'max_rows_to_read = 2',
    'max_memory_usage = 50000000',
    "max_memory_usage = '1G'",
    "max_memory_usage = '1Gi'",
    "max_rows_in_join = '10'",
    'max_rows_to_group_by = 1e3',
    'max_result_rows = true',
    'max_execution_speed = 1000000',
    'max_ast_depth = 1000',
    'max_subquery_depth = 5',
    'function_range_max_elements_in_block = 10',
  ]) {
    assert.doesNotThrow(() => passes(`SELECT 1 SETTINGS ${setting}`), setting);
  }
});

test('a limit may not be lifted: 0, negative, a fraction under 1, above the server value, not a number', () => {
  for (const [setting, why] of [
    ['max_rows_to_read = 0', /= 0 would lift a limit: a query may lower a limit, not lift it/],
    ['max_memory_usage = -1', /= -1 would lift a limit/],
    ['max_result_rows = 0.5', /= 0 would lift a limit/],
    ["max_memory_usage = '0'", /= 0 would lift a limit/],
    ['max_result_rows = false', /= 0 would lift a limit/],
    ['max_ast_depth = 1001', /above the server's 1000: a query may lower a limit, not lift it/],
    ['max_partitions_per_insert_block = 0', /lift a limit/],
    ["max_memory_usage = 'lots'", /is a limit: its value must be a positive whole number/],
    ['max_memory_usage = 1 + 1', /is a limit: its value must be a positive whole number/],
  ] as const) {
    const r = refusal(`SELECT 1 SETTINGS ${setting}`);
    assert.equal(r.code, 164, setting);
    assert.equal(r.status, 403, setting);
    assert.match(r.message, /^Setting \w+ \(at position 19\) /, r.message);
    assert.match(r.message, why, r.message);
  }
});

test('a query may lower its own CPU priority (nice 0 to 19), never raise it', () => {
  assert.doesNotThrow(() => passes('SELECT 1 SETTINGS os_thread_priority = 10'));
  assert.doesNotThrow(() => passes('SELECT 1 SETTINGS os_threads_nice_value_query = 19'));
  for (const v of ['-5', '20', "'x'"]) {
    const r = refusal(`SELECT 1 SETTINGS os_thread_priority = ${v}`);
    assert.equal(r.code, 164, v);
    assert.match(
      r.message,
      /must be a whole number from 0 to 19: a query may only lower its own CPU priority/,
    );
  }
});

test('allow_* that open a feature, readonly, Tributary-set settings and doors stay refused', () => {
  for (const name of [
    'allow_ddl',
    'allow_introspection_functions',
    'allow_experimental_analyzer',
    'allow_experimental_ai_functions',
    'allow_experimental_eval_table_function',
    'allow_python_table_function',
    'allow_get_client_http_header',
    'readonly',
    'max_execution_time', // Tributary's query timeout
    'timeout_overflow_mode', // would turn the timeout into a silent partial answer
    'log_comment', // Tributary tags statements with it to cancel them
    'max_query_size',
    'max_memory_usage_for_user', // binds every query of the engine's one user
    'max_concurrent_queries_for_user',
    'max_bytes_before_external_group_by', // spills to disk
    'max_bytes_before_external_sort',
    'user_files_path',
    'output_format_schema', // writes a schema file
    'input_format_record_errors_file_path',
    'format_avro_schema_registry_url',
    'format_schema',
    'http_max_chunk_size',
    's3_max_redirects',
    'kafka_disable_num_consumers_limit',
    'profile',
    'query_profiler_cpu_time_period_ns',
    'no_such_setting',
  ]) {
    const r = refusal(`SELECT 1 SETTINGS ${name} = 1`);
    assert.equal(r.code, 164, name);
    assert.equal(r.status, 403, name);
    assert.match(
      r.message,
      new RegExp(`^Setting ${name} \\(at position 19\\) may not be changed by a query`),
    );
    assert.match(r.message, /docs\/sql-reference\.md, "Engine settings a query may carry"/);
    assert.ok(!isAllowedQuerySetting(name), name);
  }
});

test('no allowed name is about a path, a file, an address, a credential or a profile', () => {
  const door =
    /path|file|url|host|user|password|profile|s3|http|kafka|readonly|^max_execution_time$|^log_comment$/;
  for (const name of [...FREE_QUERY_SETTINGS, ...QUERY_LIMITS.keys()]) {
    assert.ok(!door.test(name), name);
  }
  for (const [name, ceiling] of QUERY_LIMITS) assert.ok(ceiling > 0, name);
});

function setting(name: string, text: string): Setting {
  const span = { start: 4, end: 4 + name.length };
  return { kind: 'Setting', name, value: { kind: 'Number', text, span }, span };
}

test('SET is held to the same rule: a lowered limit passes, a lifted one and allow_ddl are refused', () => {
  assert.doesNotThrow(() =>
    checkSessionSettings([setting('max_rows_to_read', '10'), setting('seek_to', '1')]),
  );
  for (const [name, text] of [
    ['max_rows_to_read', '0'],
    ['allow_ddl', '1'],
  ]) {
    assert.throws(
      () => checkSessionSettings([setting(name as string, text as string)]),
      (e: unknown) => isTributaryError(e) && e.code === 164 && e.message.includes(`${name} (at position 5)`),
    );
  }
});

test('docs/sql-reference.md names every setting a query may carry by name', () => {
  const doc = readFileSync(new URL('../../docs/sql-reference.md', import.meta.url), 'utf8');
  const start = doc.indexOf('## Engine settings a query may carry');
  assert.ok(start >= 0, 'the section exists');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  for (const name of [...FREE_QUERY_SETTINGS, ...QUERY_LIMITS.keys(), ...QUERY_RANGES.keys()]) {
    assert.ok(section.includes(`\`${name}\``), `${name} is documented`);
  }
});
