/**
 * Proton's JSON access: the shortcut `col:path` (json_value), `col:path[*]` and `raw[*]` (every
 * element), `col:[i]`, `::type` casts after it, and json_value / json_values / json_extract_array
 * with Proton's meaning, in historical and streaming queries. Proton's definitions:
 * src/Parsers/Streaming/ParserJsonElementExpression.cpp, src/Functions/FunctionSQLJSON.h,
 * src/Functions/FunctionsJSON.cpp (JSONExtractArrayImpl).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
  await api.exec('CREATE STREAM json_s (id int32, raw string)');
});
after(() => api.close());

/** Header names and rows of a historical query. */
async function historical(sql: string): Promise<{ header: string[]; rows: unknown[][] }> {
  const { header, rows } = await api.historical(sql);
  return { header: header.map((c) => c.name), rows };
}

const DOC = '{"a":{"b":[1,"x",{"c":2}]},"s":"text","n":"10","f":"3.5","t":true,"k.d":5,"m":[[1,2],[3]]}';

test('col:path is json_value: scalars unquoted, objects and arrays as their JSON text, missing as empty', async () => {
  const r = await historical(
    `WITH '${DOC}' AS raw SELECT raw:s, raw:a, raw:a.b, raw:a.b[1], raw:a.b[2].c, raw:\`k.d\`, raw:t, raw:nope`,
  );
  assert.deepEqual(r.header, [
    'raw:s',
    'raw:a',
    'raw:a.b',
    'raw:a.b[1]',
    'raw:a.b[2].c',
    'raw:`k.d`',
    'raw:t',
    'raw:nope',
  ]);
  assert.deepEqual(r.rows, [['text', '{"b":[1,"x",{"c":2}]}', '[1,"x",{"c":2}]', 'x', '2', '5', 'true', '']]);
});

test('col:path::type casts the value; col:path[*] and raw[*] answer every element; col:[i] indexes', async () => {
  const r = await historical(
    `WITH '${DOC}' AS raw SELECT raw:n::int, raw:f::float, raw:t::bool, raw:a.b[*], raw:m[*], raw:m[*][0], raw:a.b[*].c`,
  );
  assert.deepEqual(r.rows, [[10, 3.5, true, ['1', 'x', '{"c":2}'], ['[1,2]', '[3]'], ['1', '3'], ['2']]]);
  const arr = await historical('WITH \'[7,"eight",{"n":9}]\' AS raw SELECT raw:[0], raw:[2].n, raw[*]');
  assert.deepEqual(arr.rows, [['7', '9', ['7', 'eight', '{"n":9}']]]);
});

test('json_value, json_values and json_extract_array as Proton defines them', async () => {
  const r = await historical(
    `SELECT json_value('${DOC}', '$.a'), json_value('${DOC}', '$.s'), json_values('${DOC}', '$.s', '$.a.b[0]', '$.nope'),
      json_extract_array('{"a": "hello", "b": [-100, 200.0, "hello"]}', 'b'), json_extract_array('[1,[2]]'),
      json_extract_array('{"b": 1}', 'b')`,
  );
  assert.deepEqual(r.rows, [
    ['{"b":[1,"x",{"c":2}]}', 'text', ['text', '1', ''], ['-100', '200', 'hello'], ['1', '[2]'], []],
  ]);
});

test('the shortcut over a stream column, historical and streaming, in select items and conditions', async () => {
  await api.exec(
    `INSERT INTO json_s (id, raw) VALUES (1, '{"user":{"name":"ann"},"n":"5","tags":["x","y"]}'), (2, '{"user":{"name":"bob"},"n":"7","tags":[]}')`,
  );
  const h = await historical(
    "SELECT id, raw:user.name AS name, raw:n::int + 1 AS n1, raw:tags[*] AS tags FROM table(json_s) WHERE raw:n::int > 5 OR raw:user.name = 'ann' ORDER BY id",
  );
  assert.deepEqual(h.rows, [
    [1, 'ann', 6, ['x', 'y']],
    [2, 'bob', 8, []],
  ]);
  const q = await api.start(
    "SELECT id, raw:user.name, raw:n::int * 2 AS n2, raw:tags[*] FROM json_s WHERE raw:user.name != 'zed'",
  );
  assert.deepEqual(q.header, ['id', 'raw:user.name', 'n2', 'raw:tags[*]']);
  await api.exec(
    `INSERT INTO json_s (id, raw) VALUES (3, '{"user":{"name":"cy"},"n":"2","tags":["q"]}'), (4, '{"user":{"name":"zed"},"n":"1"}')`,
  );
  await q.waitForRows(1);
  assert.deepEqual(await q.waitForQuiet(300), [[3, 'cy', 4, ['q']]]);
  await q.cancel();
});

test("json_extract and json_extract_keys_and_values take the result type in Proton's spelling", async () => {
  const r = await historical(
    `SELECT json_extract('{"a": "123456"}', 'a', 'fixed_string(6)'), json_extract('{"a": {"b": 1, "c": "x"}}', 'a', 'tuple(b int32, c low_cardinality(string))'),
      json_extract_keys_and_values('{"a": 1, "b": 2}', 'uint8'), json_extract('{"a": [1, 2]}', 'a', 'array(nullable(int64))')`,
  );
  assert.deepEqual(r.rows, [
    [
      '123456',
      { b: 1, c: 'x' },
      [
        ['a', 1],
        ['b', 2],
      ],
      [1, 2],
    ],
  ]);
});
