/** checkOverCompatibility: Proton's refusals of mixed OVER calls and aggregates in a streaming SELECT. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SelectQuery } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { checkOverCompatibility } from '../../src/streaming/over-compatibility.ts';

const check = (sql: string) => checkOverCompatibility(parseQuery(sql) as SelectQuery);

test('aggregates beside an OVER call, or OVER aggregates beside OVER non-aggregates: 48', () => {
  for (const [sql, says] of [
    // 0016_substream_case id 4: the PARTITION BY makes lag() and max() both OVER calls.
    [
      'SELECT window_start, window_end, id, val_i, val_i - 1, lag(val_i), max(val_i) OVER (PARTITION BY id), emit_version() FROM tumble(s, 2s) PARTITION BY id GROUP BY window_start, window_end',
      /window over non-aggregation/,
    ],
    ['SELECT id, lag(v), count() FROM s PARTITION BY id GROUP BY id', /window over non-aggregation/],
    ['SELECT count(), max(v) OVER (PARTITION BY id) FROM s', /non-window over aggregation/],
    ['SELECT count(), lag(v) OVER (PARTITION BY id) FROM s', /non-window over aggregation/],
    [
      'SELECT sum(v) OVER (PARTITION BY id), lag(v) OVER (PARTITION BY id) FROM s',
      /window over non-aggregation/,
    ],
    [
      'SELECT max(v) OVER (PARTITION BY id) FROM s GROUP BY id HAVING count() > 1',
      /non-window over aggregation/,
    ],
  ] as const) {
    assert.throws(
      () => check(sql),
      (e: { code?: number; message?: string }) => e.code === 48 && says.test(String(e.message)),
      sql,
    );
  }
});

test('one kind of call at a time is allowed', () => {
  for (const sql of [
    'SELECT id, count(), max(v) FROM s PARTITION BY id GROUP BY id',
    'SELECT id, lag(v), lags(v, 1, 2) FROM s PARTITION BY id',
    'SELECT max(v) OVER (PARTITION BY id), count() OVER (PARTITION BY id) FROM s',
    // Without PARTITION BY, lag() is no OVER call: it reads the emitted rows (lag-rewrite.ts).
    'SELECT id, lag(count()) FROM s GROUP BY id',
    // Only top-level items become OVER calls: lag() inside an expression stays a plain call.
    'SELECT id, to_string(lag(v)), count() FROM s PARTITION BY id GROUP BY id',
  ]) {
    assert.doesNotThrow(() => check(sql), sql);
  }
});
