/**
 * The time range of a stream-to-stream join, read from ON conjuncts as Proton reads it
 * (CollectJoinOnKeysVisitor.cpp, RangeAsofJoinContext.cpp): `date_diff(u, a, b)` is `a - b`,
 * bounds normalised to `lower <(=) left - right <(=) upper` in seconds, and the rules that make a
 * range malformed (code 62).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conjuncts } from '../../src/sql/analyzer/query-facts.ts';
import type { Expr } from '../../src/sql/ast/expression.ts';
import { parseExpression } from '../../src/sql/parser/parse.ts';
import { printExpression } from '../../src/sql/printer/format.ts';
import { extractRange, type JoinSide } from '../../src/streaming/join-range.ts';

const LEFT = new Set(['i', 'ts', 's']);
const RIGHT = new Set(['ii', 'tts', 'ss']);
const sideOf = (e: Expr): JoinSide => {
  const text = printExpression(e);
  const names = text.match(/[a-z_]+/g) ?? [];
  const l = names.some((n) => LEFT.has(n));
  const r = names.some((n) => RIGHT.has(n));
  return l && r ? 'both' : l ? 'left' : r ? 'right' : undefined;
};
const tp = { left: parseExpression('l._tp_time'), right: parseExpression('r._tp_time') };

function range(on: string) {
  const { range: r, rest } = extractRange(conjuncts(parseExpression(on)), sideOf, tp);
  assert.ok(r, on);
  return {
    left: printExpression(r.left),
    right: printExpression(r.right),
    lower: r.lower,
    upper: r.upper,
    strict: [r.lowerStrict, r.upperStrict],
    rest: rest.map(printExpression),
  };
}

test('date_diff_within: |left - right| <= interval, seconds or minutes, 1 or 3 arguments', () => {
  assert.deepEqual(range('i = ii AND date_diff_within(10s, ts, tts)'), {
    left: 'ts',
    right: 'tts',
    lower: -10,
    upper: 10,
    strict: [false, false],
    rest: ['i = ii'],
  });
  assert.deepEqual(range('date_diff_within(2m, tts, ts) AND i = ii'), {
    left: 'ts',
    right: 'tts',
    lower: -120,
    upper: 120,
    strict: [false, false],
    rest: ['i = ii'],
  });
  const one = range('i = ii AND date_diff_within(10s)');
  assert.equal(one.left, 'l._tp_time');
  assert.equal(one.right, 'r._tp_time');
});

test('date_diff bounds: a - b, either order of arguments and of comparison operands', () => {
  // ts - tts in (0, 10).
  assert.deepEqual(
    range("i = ii AND date_diff('second', ts, tts) > 0 AND date_diff('second', ts, tts) < 10"),
    {
      left: 'ts',
      right: 'tts',
      lower: 0,
      upper: 10,
      strict: [true, true],
      rest: ['i = ii'],
    },
  );
  // tts - ts in (-10, 0]  <=>  ts - tts in [0, 10).
  const flipped = range(
    "i = ii AND date_diff('second', tts, ts) > -10 AND date_diff('second', tts, ts) <= 0",
  );
  assert.deepEqual(
    [flipped.left, flipped.lower, flipped.upper, flipped.strict],
    ['ts', 0, 10, [false, true]],
  );
  // 10 >= x is x <= 10; minutes count 60 s.
  const lit = range("i = ii AND -1 <= date_diff('minute', ts, tts) AND 1 >= date_diff('minute', ts, tts)");
  assert.deepEqual([lit.lower, lit.upper, lit.strict], [-60, 60, [false, false]]);
  const between = range("i = ii AND date_diff('second', ts, tts) BETWEEN -10 AND 10");
  assert.deepEqual([between.lower, between.upper, between.strict], [-10, 10, [false, false]]);
});

test('a date_diff against a constant is a plain condition, not a range', () => {
  const { range: r, rest } = extractRange(
    conjuncts(parseExpression("i = ii AND date_diff('second', ts, now()) < 5")),
    sideOf,
    tp,
  );
  assert.equal(r, undefined);
  assert.equal(rest.length, 2);
});

test('malformed ranges answer 62 with Proton rules; other units 48', () => {
  const code = (on: string): number => {
    try {
      extractRange(conjuncts(parseExpression(on)), sideOf, tp);
    } catch (e) {
      return (e as { code: number }).code;
    }
    return 0;
  };
  const dd = "date_diff('second', ts, tts)";
  assert.equal(code(`${dd} > 3 AND ${dd} < 10`), 62); // lower bound above zero
  assert.equal(code(`${dd} > -10 AND ${dd} < -2`), 62); // upper bound below zero
  assert.equal(code(`${dd} > -200 AND ${dd} < 200`), 62); // wider than 300 s
  assert.equal(code(`${dd} > -200`), 62); // one bound only
  assert.equal(code(`${dd} > -20 AND ${dd} < 10 AND ${dd} < 20`), 62); // three bounds
  assert.equal(code(`${dd} > -1 AND date_diff('second', ts, tts + 1) < 10`), 62); // two expressions
  assert.equal(code("date_diff('hour', ts, tts) BETWEEN -1 AND 1"), 48);
  assert.equal(code('date_diff_within(1h, ts, tts)'), 48);
  assert.equal(code(`${dd} BETWEEN -150 AND 150`), 0); // exactly 300 s is allowed
});
