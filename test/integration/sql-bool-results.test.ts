/**
 * Historical queries answer `bool` where Proton does (src/sql/translator/bool-results.ts): a select
 * item that is a comparison, a logical operator, LIKE/IN/BETWEEN/IS NULL or a predicate function
 * has type `bool` in the header and JSON true/false values, under the name Proton gives it; a
 * condition nested in another expression keeps the engine's type; WHERE and GROUP BY work as before.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

async function run(
  sql: string,
): Promise<{ header: Array<{ name: string; type: string }>; rows: unknown[][] }> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 200, r.body);
  const events = r.body.split('\n\n');
  const first = events.find((e) => e.startsWith('event: query'));
  const header = JSON.parse(first!.slice(first!.indexOf('data: ') + 6)).result.header;
  const rows = events
    .filter((e) => e.startsWith('data: ['))
    .flatMap((e) => JSON.parse(e.slice(6)) as unknown[][]);
  return { header, rows };
}

test('conditions in the select list answer bool, named as Proton names them', async () => {
  const r = await run(
    "SELECT 1 = 1, 2 < 1 AS lt, NOT 0, 1 IN (1, 2), 'abc' LIKE 'a%', 3 BETWEEN 1 AND 2, NULL IS NULL, has([1, 2], 2), starts_with('abc', 'b'), empty('')",
  );
  assert.deepEqual(
    r.header.map((c) => c.type),
    ['bool', 'bool', 'bool', 'bool', 'bool', 'bool', 'bool', 'bool', 'bool', 'bool'],
  );
  assert.deepEqual(r.rows, [[true, false, true, true, true, false, true, true, false, true]]);
  assert.deepEqual(r.header.map((c) => c.name).slice(0, 2), ['equals(1, 1)', 'lt']);
});

test('predicates Proton keeps as uint8 stay uint8; point_in_polygon is bool', async () => {
  const r = await run(
    'SELECT has_all([1, 2], [1]), has_any([1], [2]), has_substr([1, 2], [2]), array_all(x -> x > 0, [1]), has([1], 1), point_in_polygon((3., 3.), [(6, 0), (8, 4), (5, 8), (0, 2)])',
  );
  assert.deepEqual(
    r.header.map((c) => c.type),
    ['uint8', 'uint8', 'uint8', 'uint8', 'bool', 'bool'],
  );
  assert.deepEqual(r.rows, [[1, 0, 1, 1, true, true]]);
});

test('a nullable condition is nullable(bool); nested conditions keep the engine type', async () => {
  const r = await run(
    'SELECT to_nullable(1) = NULL AS n, sum(number > 1) AS s, [number > 1] AS a FROM numbers(3) GROUP BY number ORDER BY number LIMIT 1',
  );
  assert.deepEqual(
    r.header.map((c) => c.type),
    ['nullable(bool)', 'uint64', 'array(uint8)'],
  );
  assert.deepEqual(r.rows, [[null, 0, [0]]]);
});

test('NaN prints as nan, never -nan, in float columns and arrays of floats; strings keep their text', async () => {
  const r = await run("SELECT 1 % 0. AS a, [1 % 0., 1.5] AS b, to_float32(1 % 0.) AS c, '-nan' AS s");
  assert.deepEqual(r.rows, [['nan', ['nan', 1.5], 'nan', '-nan']]);
});

test('bool items feed outer queries, WHERE and GROUP BY as before', async () => {
  const r = await run(
    'SELECT big, count() AS c, sum(big) AS s FROM (SELECT number > 2 AS big FROM numbers(5)) WHERE big OR NOT big GROUP BY big ORDER BY big',
  );
  assert.deepEqual(
    r.header.map((c) => c.type),
    ['bool', 'uint64', 'uint64'],
  );
  assert.deepEqual(r.rows, [
    [false, 3, 0],
    [true, 2, 2],
  ]);
});
