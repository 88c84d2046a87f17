/**
 * The engine's side of the query-settings policy (src/sql/translator/query-setting-policy.ts):
 * the ceilings of the limits are the values the engine really runs with (Tributary sets none of
 * them), every allowed name is one the engine knows (so it never answers "Unknown setting"), no
 * name of the engine's whole list that the prefix families admit is a door, and through the REST
 * query API a refused setting answers 164 with its position while allowed ones (a lowered limit
 * included, which the engine then enforces) run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Engine } from '../../src/engine/engine.ts';
import {
  FREE_QUERY_SETTINGS,
  isAllowedQuerySetting,
  QUERY_LIMITS,
  QUERY_RANGES,
} from '../../src/sql/translator/query-setting-policy.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let engine: Engine;
/** The engine's settings as a user query's session sees them: name -> value. */
const settings = new Map<string, string>();

before(async () => {
  h = await startHarness();
  engine = (h.trb as unknown as { services: { engine: Engine } }).services.engine;
  const r = await engine.query('SELECT name, value FROM system.settings', {
    format: 'JSONCompactEachRow',
    lane: 'user',
    userSql: true,
  });
  for (const line of r.text().trim().split('\n')) {
    const [name, value] = JSON.parse(line) as [string, string];
    settings.set(name, value);
  }
});
after(() => h.close());

async function exec(sql: string) {
  return h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
}

test('each limit ceiling is the value the engine runs user queries with', () => {
  for (const [name, ceiling] of QUERY_LIMITS) {
    const value = settings.get(name);
    assert.ok(value !== undefined, `${name} is an engine setting`);
    if (Number.isFinite(ceiling)) assert.equal(Number(value), ceiling, name);
    else assert.ok(Number(value) <= 0, `${name} is unlimited on the engine (${value})`);
  }
});

test('every setting a query may carry is known to the engine', () => {
  for (const name of [...FREE_QUERY_SETTINGS, ...QUERY_LIMITS.keys(), ...QUERY_RANGES.keys()]) {
    assert.ok(settings.has(name), `${name} is an engine setting`);
  }
});

test('of the engine whole list, what the allow-list admits is never a door', () => {
  const door =
    /path|file|url|host|user|password|profile|credential|secret|s3|azure|hdfs|http|kafka|readonly|^max_execution_time$|^log_comment$|external/;
  let admitted = 0;
  for (const name of settings.keys()) {
    if (!isAllowedQuerySetting(name)) continue;
    admitted++;
    assert.ok(!door.test(name), `${name} is admitted`);
  }
  assert.ok(admitted > 100, `${admitted} admitted`);
});

test('a refused setting answers 164 with its position through the REST API; allowed ones run', async () => {
  const lifted = await exec('SELECT count() FROM numbers(10) SETTINGS max_threads = 1, max_rows_to_read = 0');
  assert.equal(lifted.statusCode, 403, lifted.body);
  assert.equal(lifted.json().code, 164, lifted.body);
  assert.match(lifted.json().message, /Setting max_rows_to_read \(at position 59\) = 0 would lift a limit/);

  const ddl = await exec('SELECT 1 SETTINGS allow_ddl = 1');
  assert.equal(ddl.json().code, 164, ddl.body);
  assert.match(ddl.json().message, /Setting allow_ddl \(at position 19\) may not be changed by a query/);

  const ok = await exec(
    'SELECT count() AS n FROM numbers(10) SETTINGS optimize_read_in_order = 0, convert_query_to_cnf = 1, ' +
      "output_format_write_statistics = 0, force_primary_key = 0, max_rows_to_read = 100, max_memory_usage = '1G'",
  );
  assert.equal(ok.statusCode, 200, ok.body);
  assert.match(ok.body, /10/);
});

test('a lowered limit is enforced by the engine, in SETTINGS and through SET', async () => {
  const over = await exec('SELECT count() FROM numbers(1000) SETTINGS max_rows_to_read = 10');
  assert.equal(over.statusCode, 400, over.body);
  assert.equal(over.json().code, 158, over.body); // TOO_MANY_ROWS
  const set = await h.call('POST', '/v1beta2/queries', {
    body: { sql: 'SET max_result_rows = 3; SELECT number FROM numbers(10)' },
  });
  assert.match(set.body, /"code":396/, set.body); // TOO_MANY_ROWS_OR_BYTES
  const broken = await exec(
    "SELECT sum(number) FROM numbers(100000) SETTINGS max_block_size = 10, max_rows_to_read = 100, read_overflow_mode = 'break'",
  );
  assert.equal(broken.statusCode, 200, broken.body);
});
