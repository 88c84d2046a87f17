import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

// A view's rows go into its target as the engine wrote them when every column has the target's own
// type (target-writer.ts), and through the checked ingest path otherwise: both must keep every
// value exactly, and a value the target cannot take must fail the write, not land changed.

let h: Harness;
const q = new SqlCalls(() => h);

before(async () => {
  h = await startHarness({ tuning: { mvRetry: { baseMs: 50, maxMs: 200 } } });
});
after(() => h.close());

const COLUMNS = [
  'i int64',
  'u uint64',
  'f float64',
  's string',
  'd decimal(20, 4)',
  "ts datetime64(3, 'UTC')",
  'a array(int32)',
  'm map(string, int32)',
  'n nullable(string)',
  'b bool',
  'tu tuple(int32, string)',
  'lc low_cardinality(string)',
  'day date',
];

const ROWS: unknown[][] = [
  [
    '9223372036854775807',
    '18446744073709551615',
    1.5,
    'quote " backslash \\ newline \n tab \t',
    '12345678901234.5678',
    '2024-01-01 00:00:00.123',
    [1, -2, 3],
    { a: 1, 'b"': 2 },
    null,
    true,
    [7, 'x'],
    'low',
    '2024-02-29',
  ],
  [
    '-9223372036854775808',
    '0',
    -0.000001,
    'unicode é ü 中文 😀',
    '-0.0001',
    '1970-01-01 00:00:00.000',
    [],
    {},
    'not null',
    false,
    [-1, ''],
    '',
    '1970-01-01',
  ],
  [
    3,
    3,
    1e300,
    '',
    '0',
    '2099-12-31 23:59:59.999',
    [2147483647],
    { z: -1 },
    '',
    true,
    [0, 'y'],
    'low',
    '2000-01-01',
  ],
];

const names = COLUMNS.map((c) => c.split(' ')[0]).join(', ');

test('a view writes values of every type into a target of the same types exactly as the source holds them', async () => {
  await q.ok(`CREATE STREAM typed (${COLUMNS.join(', ')})`);
  await q.ok(`CREATE MATERIALIZED VIEW typed_mv AS SELECT ${names} FROM typed`);
  const mvs = h.trb.services.mvs;
  await eventually(
    'typed_mv running',
    async () => mvs.state(mvs.require('default', 'typed_mv')).status === 'ExecutingPipeline',
  );
  await q.ingest('typed', names.split(', '), ROWS);
  await eventually(
    'typed_mv wrote',
    async () => Number((await q.rows('SELECT count() FROM table(typed_mv)'))[0]?.[0]) === ROWS.length,
  );
  const source = await q.rows(`SELECT ${names} FROM table(typed) ORDER BY i`);
  assert.equal(source.length, ROWS.length);
  assert.deepEqual(await q.rows(`SELECT ${names} FROM table(typed_mv) ORDER BY i`), source);
});

test('a target column of another type takes the checked path: a value it cannot hold fails the view and lands nowhere', async () => {
  await q.ok('CREATE STREAM wide (i int64)');
  await q.ok('CREATE STREAM narrow (i int8)');
  await q.ok('CREATE MATERIALIZED VIEW narrow_mv INTO narrow AS SELECT i FROM wide');
  const mvs = h.trb.services.mvs;
  const state = () => mvs.state(mvs.require('default', 'narrow_mv'));
  await eventually('narrow_mv running', async () => state().status === 'ExecutingPipeline');
  await q.ingest('wide', ['i'], [[5], [-6]]);
  await eventually(
    'narrow_mv wrote',
    async () => Number((await q.rows('SELECT count() FROM table(narrow)'))[0]?.[0]) === 2,
  );
  await q.ingest('wide', ['i'], [[7], [1000]]);
  await eventually(
    'narrow_mv failed',
    async () => state().status === 'Error' || state().status === 'AutoRecovering',
  );
  assert.match(state().lastError.message, /1000|range|int8/i);
  assert.deepEqual(await q.rows('SELECT i FROM table(narrow) ORDER BY i'), [[-6], [5]]);
});
