/**
 * Values a column cannot hold, in every ingest format and through SQL INSERT ... FORMAT: a 400
 * (INGEST_BAD_VALUE) naming the row and the column and what was wrong, never a 500, and nothing
 * written. Numbers past 2^53 are decided on their exact digits (1e19 fits uint64 and int128, not
 * int64); booleans are no numbers and objects no strings.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { count, createStream, ingestRaw, rows } from '../helpers/streams.ts';

let h: Harness;

const COLUMNS = [
  { name: 'i8', type: 'int8' },
  { name: 'i64', type: 'int64' },
  { name: 'u64', type: 'uint64' },
  { name: 'i128', type: 'int128' },
  { name: 'u256', type: 'uint256' },
  { name: 'f32', type: 'float32' },
  { name: 'f64', type: 'float64' },
  { name: 'd', type: 'decimal(10, 2)' },
  { name: 's', type: 'string' },
  { name: 'ns', type: 'nullable(string)' },
  { name: 'dd', type: 'date' },
  { name: 'dt', type: 'datetime64(3)' },
  { name: 'n', type: 'nullable(int64)' },
  { name: 'a', type: 'array(int64)' },
];

before(async () => {
  h = await startHarness();
  await createStream(h, { name: 'wide', columns: COLUMNS });
  await createStream(h, { name: 'lines_int', columns: [{ name: 'raw', type: 'int64' }] });
});

after(() => h.close());

const NDJSON = 'application/x-ndjson';
const JSON_TYPE = 'application/json';

/** A request that must be refused with INGEST_BAD_VALUE naming `row` and `column`, writing nothing. */
async function refused(
  stream: string,
  body: string,
  contentType: string,
  row: number,
  column: string,
  detail: RegExp,
): Promise<void> {
  const before = await count(h, stream);
  const r = await ingestRaw(h, stream, body, contentType);
  assert.equal(r.statusCode, 400, `${body}: ${r.body}`);
  const e = r.json() as { code: number; message: string };
  assert.equal(e.code, ERRORS.INGEST_BAD_VALUE.code, r.body);
  assert.match(e.message, new RegExp(`^Row ${row}, column ${column}: `), r.body);
  assert.match(e.message, detail, r.body);
  assert.equal(await count(h, stream), before, `${body} wrote rows`);
}

/** The same value refused in the compact and the streaming format, as row 2 after a good row. */
async function refusedBoth(column: string, literal: string, detail: RegExp): Promise<void> {
  await refused(
    'wide',
    `{"columns":["${column}"],"data":[[null],[${literal}]]}`,
    JSON_TYPE,
    2,
    column,
    detail,
  );
  await refused('wide', `{"${column}":null}\n{"${column}":${literal}}\n`, NDJSON, 2, column, detail);
}

test('integers past int64 as JSON numbers (1e19, 1.18e21, -1e19, 2^63) answer 400, not 500', async () => {
  for (const v of ['1e19', '1.18e21', '-1e19', '1E+20', '9223372036854775808', '1e400', '-1e400']) {
    await refusedBoth('i64', v, /out of range for int64/);
    await refusedBoth('n', v, /out of range for int64/);
  }
  await refusedBoth('i64', '123456789012345678901234567890123456789012345678901234567890', /out of range/);
  await refusedBoth('u64', '-1e19', /out of range for uint64/);
  await refusedBoth('u64', '1.18e21', /out of range for uint64/);
  await refusedBoth('u64', '18446744073709551616', /out of range for uint64/);
  await refusedBoth('i8', '1e19', /out of range for int8/);
  await refusedBoth('u256', '-1', /out of range for uint256/);
  await refusedBoth('a', '[1, 1e19]', /element 2: .*out of range for int64/);
  await refusedBoth('d', '1e19', /digits before the point/);
  await refusedBoth('d', '1e400', /decimal/);
  await refusedBoth('f32', '1e39', /out of range for float32/);
  await refusedBoth('f64', '1e400', /out of range for float64/);
  await refusedBoth('dd', '1e19', /out of range for date/);
  await refusedBoth('dt', '1e19', /out of range for datetime64/);
});

test('booleans into numbers and objects or arrays into strings are refused, naming the type', async () => {
  for (const c of ['i8', 'i64', 'n', 'f32', 'f64', 'd']) {
    await refusedBoth(c, 'true', /got boolean true/);
    await refusedBoth(c, 'false', /got boolean false/);
  }
  await refusedBoth('s', '{"a":1}', /expected a string, got an object/);
  await refusedBoth('s', '[1,2]', /expected a string, got an array/);
  await refusedBoth('ns', '{}', /expected a string, got an object/);
});

test('lines and raw bodies into an integer column: the text is range-checked too', async () => {
  await refused('lines_int', '1\n1e19\n', 'text/plain;format=lines', 2, 'raw', /expected an integer/);
  await refused('lines_int', '1\n9223372036854775808\n', 'text/plain;format=lines', 2, 'raw', /out of range/);
  await refused('lines_int', '-9223372036854775809', 'text/plain', 1, 'raw', /out of range for int64/);
  const r = await ingestRaw(h, 'lines_int', '1\n9223372036854775807\n', 'text/plain;format=lines');
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(await rows(h, 'SELECT toString(raw) FROM lines_int ORDER BY _tp_sn'), [
    ['1'],
    ['9223372036854775807'],
  ]);
});

test('integers past 2^53 that fit are stored exactly, also spelled with an exponent', async () => {
  const body =
    '{"columns":["s","u64","i128","u256"],"data":[' +
    '["c1", 1e19, 1.18e21, 1e40],' +
    '["c2", 18446744073709551615, -1e19, 12345678901234567890123]]}';
  const r = await ingestRaw(h, 'wide', body, JSON_TYPE);
  assert.equal(r.statusCode, 200, r.body);
  const nd = '{"s":"n1","u64":1e19,"i128":-1.18e21,"u256":1.5e20}';
  const r2 = await ingestRaw(h, 'wide', nd, NDJSON);
  assert.equal(r2.statusCode, 200, r2.body);
  assert.deepEqual(
    await rows(
      h,
      "SELECT s, toString(u64), toString(i128), toString(u256) FROM wide WHERE s != '' ORDER BY s",
    ),
    [
      ['c1', '10000000000000000000', '1180000000000000000000', `1${'0'.repeat(40)}`],
      ['c2', '18446744073709551615', '-10000000000000000000', '12345678901234567890123'],
      ['n1', '10000000000000000000', '-1180000000000000000000', '150000000000000000000'],
    ],
  );
});

test('SQL INSERT ... FORMAT JSONEachRow refuses the same values with the same 400', async () => {
  const before = await count(h, 'wide');
  const r = await h.call('POST', '/v1beta2/queries', {
    body: { sql: 'INSERT INTO wide (i64) FORMAT JSONEachRow {"i64": 1}\n{"i64": 1e19}' },
  });
  assert.equal(r.statusCode, 400, r.body);
  const e = r.json() as { code: number; message: string };
  assert.equal(e.code, ERRORS.INGEST_BAD_VALUE.code, r.body);
  assert.match(e.message, /^Row 2, column i64: .*out of range for int64/);
  assert.equal(await count(h, 'wide'), before);
});

test('SQL INSERT ... VALUES converts as the engine does and never answers 5xx', async () => {
  // VALUES are read by the engine's own INSERT (sql-insert.test.ts): what it cannot convert is its
  // 4xx; what it converts (wrapping, as ClickHouse and Proton do) is stored.
  for (const v of ['1e19', '1.18e21', '-1e19', '1e400', 'nan', 'true', "'abc'", '[1, 2]']) {
    const r = await h.call('POST', '/v1beta2/queries', {
      body: { sql: `INSERT INTO wide (i64) VALUES (${v})` },
    });
    assert.ok(r.statusCode < 500, `${v}: ${r.statusCode} ${r.body}`);
  }
});
