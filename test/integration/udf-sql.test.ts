/**
 * SQL functions (`CREATE FUNCTION f AS (x) -> expr`): the engine expands the lambda where a query
 * calls it, in historical and streaming queries; one may call another user-defined function; they
 * are listed, refused where their body is not a lambda or names a built-in, dropped, and recreated
 * in the engine after a restart.
 */
import assert from 'node:assert/strict';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { startHarness } from '../helpers/harness.ts';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';
import { assertError } from '../helpers/streams.ts';

/** The files the engine keeps its SQL functions in (`function_<name>.sql` under the data directory). */
async function sqlFunctionFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /^function_sql_.*\.sql$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

test('SQL functions: created, called in historical and streaming queries, listed, persisted, dropped', async (t) => {
  let h = await startHarness();
  t.after(() => h.close());
  const sql = (query: string) => h.call('POST', '/v1beta2/queries', { body: { sql: query } });
  const ok = async (query: string) => {
    const r = await sql(query);
    assert.equal(r.statusCode, 204, `${query}: ${r.body}`);
  };
  // Proton function names in the body are the engine's once created (to_string -> toString)
  await ok('CREATE FUNCTION sql_label AS (x, unit) -> concat(to_string(x * 2), unit)');
  await ok(
    'CREATE FUNCTION sql_add_five_js(value float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $$ function sql_add_five_js(v) { return v.map((x) => x + 5); } $$',
  );
  // a SQL function calling a JavaScript one and another SQL one
  await ok("CREATE FUNCTION sql_both AS (x) -> sql_label(sql_add_five_js(x), 'u')");
  await ok('CREATE OR REPLACE FUNCTION sql_clamp AS (x, lo, hi) -> least(greatest(x, lo), hi)');

  const r = await sql(
    "SELECT sql_label(number, 'kg'), sql_clamp(number, 1, 2), sql_both(number) FROM numbers(3)",
  );
  assert.equal(r.statusCode, 200, r.body);
  assert.match(r.body, /\[\["0kg", 1, "10u"\],\["2kg", 1, "12u"\],\["4kg", 2, "14u"\]\]/);

  const show = await sql("SHOW FUNCTIONS LIKE 'sql_%'");
  assert.match(show.body, /\["sql_label","sql",false,"x, unit",""\]/);
  const got = (await h.call('GET', '/v1beta2/udfs/sql_clamp')).json() as Record<string, unknown>;
  assert.equal(got.type, 'sql');
  assert.equal(got.source, '(x, lo, hi) -> least(greatest(x, lo), hi)');
  assert.deepEqual(got.arguments, [
    { name: 'x', type: '' },
    { name: 'lo', type: '' },
    { name: 'hi', type: '' },
  ]);

  // refusals: not a lambda, a built-in's name, an existing name, an aggregate in the body
  assertError(await sql('CREATE FUNCTION sql_bad AS 1 + 2'), 400, 36, /must be a lambda/);
  assertError(await sql('CREATE FUNCTION concat AS (x) -> x'), 409, 609, /built-in/);
  assertError(await sql('CREATE FUNCTION sql_label AS (x) -> x'), 409, 609, /already exists/);
  assertError(await sql('CREATE FUNCTION sql_total AS (x) -> sum(x)'), 400, 48, /aggregate/);

  // streaming: a tail and a global aggregation over a SQL function
  let api = await StreamingApi.attach(h);
  const s = await api.createStream('sql_fn_src', '(k int8, v int32)');
  const tail = await api.start(`SELECT sql_label(v, 'm') FROM ${s}`);
  const agg = await api.start(`SELECT k, sum(sql_clamp(v, 0, 10)) FROM ${s} GROUP BY k EMIT ON UPDATE`);
  await api.ingest(
    s,
    ['k', 'v'],
    [
      [1, 3],
      [1, 30],
      [2, -4],
    ],
  );
  assertSameRows(await tail.waitForRows(3), [['6m'], ['60m'], ['-8m']]);
  assertSameRows(await agg.waitForRows(2), [
    [1, 13],
    [2, 0],
  ]);
  await tail.cancel();
  await agg.cancel();

  // after a restart the engine has them again, from the catalog (the engine's own copies are
  // removed here to prove it), and only them
  await ok('DROP FUNCTION sql_clamp');
  await h.stop();
  const engineCopies = await sqlFunctionFiles(h.dataDir);
  assert.ok(engineCopies.length > 0, 'the engine keeps its SQL functions as files');
  for (const f of engineCopies) await rm(f);
  h = await h.restart();
  api = await StreamingApi.attach(h);
  const again = await sql('SELECT sql_both(1)');
  assert.equal(again.statusCode, 200, again.body);
  assert.match(again.body, /\[\["12u"\]\]/);
  assertError(await sql('SELECT sql_clamp(1, 2, 3)'), 400, 46, /Unknown function sql_clamp/);

  await ok('DROP FUNCTION sql_both');
  await ok('DROP FUNCTION IF EXISTS sql_both');
  assertError(await sql('SELECT sql_both(1)'), 400, 46, /Unknown function sql_both/);
});
