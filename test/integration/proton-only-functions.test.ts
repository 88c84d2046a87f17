/** Proton-only functions: the mapped ones answer Proton's values, the refused ones say why. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** The rows of a historical query (its data events). */
async function rows(sql: string): Promise<unknown[][]> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  const out: unknown[][] = [];
  for (const block of r.body.split('\n\n')) {
    const lines = block.split('\n');
    if (lines.some((l) => l.startsWith('event: '))) continue;
    const data = lines.find((l) => l.startsWith('data: '));
    if (data) out.push(...(JSON.parse(data.slice(6)) as unknown[][]));
  }
  return out;
}

test('snowflake ids convert with the Twitter epoch, as in Proton', async () => {
  assert.deepEqual(await rows("SELECT snowflake_to_datetime(1426860704886947840, 'UTC')"), [
    ['2021-08-15 10:57:56'],
  ]);
  assert.deepEqual(await rows("SELECT snowflake_to_datetime64(1426860704886947840, 'UTC')"), [
    ['2021-08-15 10:57:56.492'],
  ]);
  const [[id]] = (await rows("SELECT datetime_to_snowflake(to_datetime('2021-08-15 10:57:56', 'UTC'))")) as [
    [string | number],
  ];
  // The id of the second, its low 22 bits zero; converted back it gives the same second.
  assert.deepEqual(await rows(`SELECT snowflake_to_datetime(${id}, 'UTC')`), [['2021-08-15 10:57:56']]);
});

test('xirr and to_bool_or_default', async () => {
  const [[rate]] = (await rows(
    "SELECT xirr([-10000, 5750, 4250, 3250], [to_date('2020-01-01'), to_date('2020-03-01'), to_date('2020-10-30'), to_date('2021-02-15')])",
  )) as [[number]];
  assert.ok(Math.abs(rate - 0.6342972615260243) < 1e-9, String(rate));
  assert.deepEqual(
    await rows(
      "SELECT to_bool_or_default('true'), to_bool_or_default('nope'), to_bool_or_default('x', true)",
    ),
    [[true, false, true]],
  );
});

test('MySQL type names work in casts', async () => {
  assert.deepEqual(
    await rows(
      "SELECT cast(1 AS MEDIUMINT), cast('a' AS BLOB), cast(2.5 AS SINGLE), cast(3 AS INT1), cast('1.25' AS NUMERIC(5, 2))",
    ),
    [[1, 'a', 2.5, 3, 1.25]],
  );
});

test('a Proton function Tributary does not support answers 48 with the reason and the alternative', async () => {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql: "SELECT grok('a', '%{WORD:w}')" } });
  assert.equal(r.statusCode, 400, r.body);
  const body = r.json() as { code: number; message: string };
  assert.equal(body.code, 48);
  assert.match(body.message, /grok \(at position 8\) is not supported: .*extract_all_groups/);
});

test("xirr is Proton's aggregate over (cash flow, date) rows, historical and per group", async () => {
  const exec = async (sql: string) => {
    const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'ddl' } });
    assert.equal(r.statusCode, 204, r.body);
  };
  await exec('CREATE STREAM t_xirr (id int, income float, date date)');
  await exec(
    "INSERT INTO t_xirr (id, income, date) VALUES (1, -1000, '2020-01-02'), (1, -1000, '2020-01-03'), (1, -1000, '2020-01-05'), (1, 3100, '2020-01-18'), (1, 100, '2020-03-09'), (2, -100, '2021-01-01'), (2, 110, '2022-01-01')",
  );
  const [[one, count, rate]] = (await rows(
    'SELECT id, count(), xirr(income, date, 0.1) FROM table(t_xirr) WHERE id = 1 GROUP BY id',
  )) as [[number, number, number]];
  assert.deepEqual([one, count], [1, 5]);
  // Proton answers 3.313433458588908 (its own solver; the last digits differ).
  assert.ok(Math.abs(rate - 3.313433458588908) < 1e-9, String(rate));
  const [[ten]] = (await rows('SELECT xirr(income, date) FROM table(t_xirr) WHERE id = 2')) as [[number]];
  assert.ok(Math.abs(ten - 0.1) < 1e-6, String(ten));
});
