/**
 * SQL INSERT ... VALUES through the query API: values are read as the engine's own INSERT ...
 * VALUES reads them (expressions, nested types, integers wrapping when out of range, as in
 * ClickHouse and Proton), then take the ingest path; a statement that fails writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';
import { rows } from '../helpers/streams.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

async function select(sql: string): Promise<unknown[][]> {
  return rows(api.h, sql);
}

test('VALUES: literals, expressions, nested types and defaults', async () => {
  await api.exec(
    "CREATE STREAM ins_a (i int32, s string, d date, t tuple(s string, i int), m map(string, int), n nullable(int64), k string DEFAULT 'dflt')",
  );
  await api.exec(
    "INSERT INTO ins_a (i, s, d, t, m, n) VALUES (1, 'a', to_date('2022-03-21'), ('x', 1), {'k1': 11}, null)" +
      "(1 + 1, concat('b', 'c'), '2022-03-22', ('y', 2), map('k2', 22), 9007199254740993)",
  );
  assert.deepEqual(await select('SELECT i, s, d, t, m, toString(n), k FROM default.ins_a ORDER BY i'), [
    [1, 'a', '2022-03-21', { s: 'x', i: 1 }, { k1: 11 }, null, 'dflt'],
    [2, 'bc', '2022-03-22', { s: 'y', i: 2 }, { k2: 22 }, '9007199254740993', 'dflt'],
  ]);
});

test('VALUES: an integer out of its column range wraps, as ClickHouse and Proton store it', async () => {
  await api.exec('CREATE STREAM ins_b (u uint8, i int8)');
  await api.exec('INSERT INTO ins_b (u, i) VALUES (1234561, 200), (255, -1)');
  assert.deepEqual(await select('SELECT u, i FROM default.ins_b ORDER BY u'), [
    [129, -56],
    [255, -1],
  ]);
});

test('VALUES: a value that cannot be read fails the statement and writes no row', async () => {
  await api.exec('CREATE STREAM ins_c (i int32, s string)');
  const r = await api.post('/v1beta2/queries', {
    sql: "INSERT INTO ins_c (i, s) VALUES (1, 'a'), ('x', 'b')",
  });
  const body = (await r.json()) as { code: number; message: string };
  assert.equal(r.status, 400, JSON.stringify(body));
  assert.ok(body.code > 0 && body.code < 1000, `an engine error code: ${JSON.stringify(body)}`);
  assert.deepEqual(await select('SELECT count() FROM default.ins_c'), [[0]]);
  // The scratch tables the values went through are gone.
  assert.deepEqual(
    await select(
      "SELECT count() FROM system.tables WHERE database = '_tributary_state' AND name LIKE 'insert\\\\_%'",
    ),
    [[0]],
  );
});
