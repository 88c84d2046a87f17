import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INSERT_SETTINGS, insertSettings } from '../../src/stream/stream-tables.ts';

test('inserts below one parallel-parsing chunk turn parallel parsing off; larger ones keep it', () => {
  assert.deepEqual(insertSettings(1), { ...INSERT_SETTINGS, input_format_parallel_parsing: 0 });
  assert.deepEqual(insertSettings(10 * 1024 * 1024 - 1), {
    ...INSERT_SETTINGS,
    input_format_parallel_parsing: 0,
  });
  assert.deepEqual(insertSettings(10 * 1024 * 1024), { ...INSERT_SETTINGS });
});
