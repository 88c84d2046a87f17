import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INSERT_SETTINGS, insertSettings } from '../../src/stream/stream-tables.ts';
import { inlineInsertSql } from '../../src/stream/wal-recovery.ts';

test('inserts below one parallel-parsing chunk turn parallel parsing off; larger ones keep it', () => {
  assert.deepEqual(insertSettings(1), { ...INSERT_SETTINGS, input_format_parallel_parsing: 0 });
  assert.deepEqual(insertSettings(10 * 1024 * 1024 - 1), {
    ...INSERT_SETTINGS,
    input_format_parallel_parsing: 0,
  });
  assert.deepEqual(insertSettings(10 * 1024 * 1024), { ...INSERT_SETTINGS });
});

test('an inline insert carries the same settings as an insert call: parallel parsing off below one chunk', () => {
  const header = { first: 7, count: 1, time: 1000, format: 'JSONCompactEachRow' as const };
  const small = inlineInsertSql('`db`.`t`', header, Buffer.from('[1]'));
  assert.match(
    small,
    /SETTINGS log_comment = 'tp:7:1000', date_time_input_format = 'best_effort', input_format_parallel_parsing = 0 FORMAT JSONCompactEachRow\n\[1\]$/,
  );
  const large = inlineInsertSql('`db`.`t`', header, Buffer.alloc(10 * 1024 * 1024, 0x20));
  assert.doesNotMatch(large.slice(0, 200), /input_format_parallel_parsing/);
});
