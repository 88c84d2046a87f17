/** Log external streams' row splitting, timestamps and settings (src/external/streams/log-*.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logSettings } from '../../src/external/streams/log-external-stream.ts';
import { type LogSettings, parseLogTime, splitRows } from '../../src/external/streams/log-files.ts';

const lines: LogSettings = { dir: '.', files: [/^x$/] };

test('lines: complete lines are rows, \\r dropped, empty lines skipped, a partial line waits', () => {
  const { rows, used } = splitRows(lines, 'a\r\n\nb\npart');
  assert.deepEqual(
    rows.map((r) => r.raw),
    ['a', 'b'],
  );
  assert.equal(used, 'a\r\n\nb\n'.length);
  assert.deepEqual(
    splitRows(lines, 'a\npart', true).rows.map((r) => r.raw),
    ['a', 'part'],
  );
  assert.deepEqual(splitRows(lines, 'no newline yet'), { rows: [], used: 0 });
});

test('row_delimiter: a row runs from one match to the next; the last waits', () => {
  const s: LogSettings = { ...lines, delimiter: /\[\d+\] / };
  const text = 'head\n[1] one\n  more\n[2] two\n[3] th';
  const { rows, used } = splitRows(s, text);
  assert.deepEqual(
    rows.map((r) => r.raw),
    ['head', '[1] one\n  more', '[2] two'],
  );
  assert.equal(text.slice(used), '[3] th');
  assert.deepEqual(splitRows(s, 'no match at all'), { rows: [], used: 0 });
});

test('timestamp_regex: the first group is _tp_time, in several forms; no match keeps no time', () => {
  const s: LogSettings = { ...lines, timestamp: /^(\S+ \S+)/ };
  const { rows } = splitRows(s, '2024.01.02 10:11:12.5 x\nnot-a-time here\n');
  assert.equal(rows[0]?.time?.toISOString(), '2024-01-02T10:11:12.500Z');
  assert.equal(rows[1]?.time, undefined);
  assert.equal(parseLogTime('2024-01-02T10:11:12+02:00')?.toISOString(), '2024-01-02T08:11:12.000Z');
  assert.equal(parseLogTime('2024/1/2 3:04:05,123456')?.toISOString(), '2024-01-02T03:04:05.123Z');
  assert.equal(parseLogTime('garbage'), undefined);
});

test('settings: log_files are anchored regular expressions; bad ones are named', () => {
  const s = logSettings({
    columns: [],
    settings: { type: 'log', log_dir: 'd', log_files: 'a.*\\.log, b.txt' },
  });
  assert.ok(s.files[0]?.test('app.log'));
  assert.ok(!s.files[0]?.test('app.log.1'));
  assert.ok(s.files[1]?.test('b.txt'));
  assert.equal(s.pollMs, 500);
  assert.equal(s.delimiter, undefined);
  assert.throws(
    () =>
      logSettings({
        columns: [],
        settings: { type: 'log', log_dir: 'd', log_files: 'x', timestamp_regex: '(' },
      }),
    /timestamp_regex/,
  );
  assert.throws(
    () =>
      logSettings({
        columns: [
          { name: 'a', type: 'string' },
          { name: 'b', type: 'string' },
        ],
        settings: { type: 'log', log_dir: 'd', log_files: 'x' },
      }),
    /columns/,
  );
});
