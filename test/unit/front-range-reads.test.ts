import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineStream } from '../../src/stream/define-stream.ts';
import { frontState, markedRangeTable, resolveFrontRanges } from '../../src/stream/front-range-reads.ts';

const cols = [{ name: 'i', type: 'int64' }];
const hybrid = defineStream({ name: 'we.i)rd$', columns: cols });
const memory = defineStream({ name: 'm', columns: cols, storageType: 'memory' });

test('a marked range read of a hybrid stream; other streams read their table', () => {
  const marked = markedRangeTable(hybrid, '__TRB_LO_0__');
  assert.match(marked, /^\/\*tp_range:[0-9a-f]+:__TRB_LO_0__\*\/`default`\.`we\.i\)rd\$`$/);
  assert.equal(markedRangeTable(memory, '__TRB_LO_0__'), '`default`.`m`');
});

test('resolved to the front when every row of the range is there, else the Merge table; no marker left', () => {
  const sql = (lo: number) =>
    `SELECT i FROM ${markedRangeTable(hybrid, String(lo))} AS s WHERE _tp_sn > ${lo} AND _tp_sn <= ${lo + 5}`;
  const state = frontState(hybrid, 100);
  const look = (key: string) => (key === 'default.we.i)rd$' ? state : undefined);
  assert.equal(
    resolveFrontRanges(sql(99), look),
    'SELECT i FROM `default`.`.tp_front.we.i)rd$` AS s WHERE _tp_sn > 99 AND _tp_sn <= 104',
  );
  assert.equal(
    resolveFrontRanges(sql(150), look),
    'SELECT i FROM `default`.`.tp_front.we.i)rd$` AS s WHERE _tp_sn > 150 AND _tp_sn <= 155',
  );
  // Row 99 is in the MergeTree: the range (98, 103] needs both tables.
  assert.equal(
    resolveFrontRanges(sql(98), look),
    'SELECT i FROM `default`.`we.i)rd$` AS s WHERE _tp_sn > 98 AND _tp_sn <= 103',
  );
  // A stream the store does not know (dropped meanwhile): the Merge table.
  assert.equal(
    resolveFrontRanges(sql(150), () => undefined),
    'SELECT i FROM `default`.`we.i)rd$` AS s WHERE _tp_sn > 150 AND _tp_sn <= 155',
  );
  // Two reads in one statement are decided one by one.
  const two = `${sql(150)} UNION ALL ${sql(10)}`;
  assert.equal(
    resolveFrontRanges(two, look),
    'SELECT i FROM `default`.`.tp_front.we.i)rd$` AS s WHERE _tp_sn > 150 AND _tp_sn <= 155 UNION ALL ' +
      'SELECT i FROM `default`.`we.i)rd$` AS s WHERE _tp_sn > 10 AND _tp_sn <= 15',
  );
  assert.equal(resolveFrontRanges('SELECT 1', look), 'SELECT 1');
});
