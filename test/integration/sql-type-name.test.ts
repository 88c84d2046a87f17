/**
 * `to_type_name(x)` answers Proton's type names (src/sql/translator/type-name-call.ts), where the
 * engine answers its own spelling; enum labels and named-tuple fields keep their text.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let base: string;
before(async () => {
  h = await startHarness();
  // over HTTP: the query event carries the long engine SQL, more than an injected reply drains
  base = `${await h.trb.listen()}/default/api`;
});
after(() => h.close());

test('to_type_name answers Proton spellings, named as Proton names the column', async () => {
  const r = await fetch(`${base}/v1beta2/queries`, {
    method: 'POST',
    headers: { ...authHeader(ADMIN), 'content-type': 'application/json' },
    body: JSON.stringify({
      sql: "SELECT to_type_name(to_nullable(1)), to_type_name(to_fixed_string('ab', 2)), to_type_name(to_datetime64('2020-01-01 00:00:00', 3, 'UTC')), to_type_name([to_low_cardinality('a')]), to_type_name(CAST('Int8', 'enum8(\\'Int8\\' = 1, \\'a b\\' = 2)')), to_type_name(CAST((1, 'x'), 'tuple(Name uint8, s string)')), to_type_name(map('k', 1.5)), to_type_name(to_uuid('00000000-0000-0000-0000-000000000000'))",
    }),
  });
  const body = await r.text();
  assert.equal(r.status, 200, body);
  const data = body
    .split('\n')
    .filter((l) => l.startsWith('data: ['))
    .flatMap((l) => JSON.parse(l.slice(6)) as unknown[][]);
  assert.deepEqual(data, [
    [
      'nullable(uint8)',
      'fixed_string(2)',
      "datetime64(3, 'UTC')",
      'array(low_cardinality(string))',
      "enum8('Int8' = 1, 'a b' = 2)",
      'tuple(Name uint8, s string)',
      'map(string, float64)',
      'uuid',
    ],
  ]);
  assert.match(body, /"name":"to_type_name\(to_nullable\(1\)\)","type":"string"/);
});
