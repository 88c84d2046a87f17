import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseExpression } from '../../src/sql/parser/parse.ts';
import { bin, call, canon, expr, id, num, str } from '../helpers/sql-ast.ts';

describe('literals', () => {
  test('numbers keep their text: ints, hex, binary, floats, exponents, inf, nan', () => {
    for (const t of ['42', '0x1F', '0b101', '1.5', '.5', '1e3', '1.5e-3', '2E+10'])
      assert.deepEqual(expr(t), num(t));
    assert.deepEqual(expr('inf'), num('inf'));
    assert.deepEqual(expr('NaN'), num('nan'));
    assert.deepEqual(expr('-inf'), { kind: 'Unary', op: '-', operand: num('inf') });
  });

  test('strings decode escapes; quotes double or backslash', () => {
    assert.deepEqual(expr(String.raw`'a\'b''c\n\t\\'`), str("a'b'c\n\t\\"));
    assert.deepEqual(expr(String.raw`'\x41'`), str('A'));
    assert.equal(canon(String.raw`'it''s\n'`), String.raw`'it\'s\n'`);
  });

  test('heredoc strings', () => {
    assert.deepEqual(expr("$$ it's $$"), str(" it's "));
    assert.deepEqual(expr('$js$ a $$ b $js$'), str(' a $$ b '));
  });

  test('NULL, true, false (case-insensitive keywords)', () => {
    assert.deepEqual(expr('null'), { kind: 'Null' });
    assert.deepEqual(expr('TRUE'), { kind: 'Bool', value: true });
    assert.deepEqual(expr('False'), { kind: 'Bool', value: false });
  });

  test('arrays, tuples, one-element tuples, maps', () => {
    assert.deepEqual(expr('[1, 2]'), { kind: 'Array', elements: [num('1'), num('2')] });
    assert.deepEqual(expr('[]'), { kind: 'Array', elements: [] });
    assert.deepEqual(expr('(1, 2)'), { kind: 'Tuple', elements: [num('1'), num('2')] });
    assert.deepEqual(expr('(1,)'), { kind: 'Tuple', elements: [num('1')] });
    assert.deepEqual(expr('(1)'), num('1'));
    assert.deepEqual(expr("{'a': 1, 'b': 2}"), {
      kind: 'Map',
      entries: [
        { key: str('a'), value: num('1') },
        { key: str('b'), value: num('2') },
      ],
    });
    assert.equal(canon('(1,)'), '(1,)');
  });
});

describe('intervals', () => {
  test('INTERVAL n UNIT, plural units, string values', () => {
    assert.deepEqual(expr('interval 5 second'), {
      kind: 'Interval',
      value: num('5'),
      unit: 'SECOND',
      shorthand: false,
    });
    assert.deepEqual(expr('INTERVAL 2 MINUTES'), {
      kind: 'Interval',
      value: num('2'),
      unit: 'MINUTE',
      shorthand: false,
    });
    assert.deepEqual(expr("interval '3' day"), {
      kind: 'Interval',
      value: str('3'),
      unit: 'DAY',
      shorthand: false,
    });
    assert.deepEqual(expr("interval '3 day'"), {
      kind: 'Interval',
      value: str('3'),
      unit: 'DAY',
      shorthand: false,
    });
  });

  test('INTERVAL with an expression value up to the unit word', () => {
    assert.deepEqual(expr('INTERVAL number * 300 SECOND'), {
      kind: 'Interval',
      value: bin('*', id('number'), num('300')),
      unit: 'SECOND',
      shorthand: false,
    });
    assert.deepEqual(expr('INTERVAL number - 15 MONTH'), {
      kind: 'Interval',
      value: bin('-', id('number'), num('15')),
      unit: 'MONTH',
      shorthand: false,
    });
    // the interval still ends at its unit: what follows is the outer expression's
    assert.deepEqual(
      expr('INTERVAL 1 DAY + x'),
      bin('+', { kind: 'Interval', value: num('1'), unit: 'DAY', shorthand: false }, id('x')),
    );
  });

  test('the shorthand is case-sensitive: m is minute, M is month; ns us ms s h d w q y', () => {
    const units: Record<string, string> = {
      '10ns': 'NANOSECOND',
      '1us': 'MICROSECOND',
      '1ms': 'MILLISECOND',
      '5s': 'SECOND',
      '2m': 'MINUTE',
      '1h': 'HOUR',
      '1d': 'DAY',
      '1w': 'WEEK',
      '1M': 'MONTH',
      '1q': 'QUARTER',
      '1y': 'YEAR',
    };
    for (const [text, unit] of Object.entries(units)) {
      const e = expr(text);
      assert.equal(e.kind === 'Interval' && e.unit, unit, text);
      assert.equal(canon(text), text);
    }
  });

  test('a signed shorthand keeps its sign in the value', () => {
    assert.deepEqual(expr('-10s'), { kind: 'Interval', value: num('-10'), unit: 'SECOND', shorthand: true });
    assert.deepEqual(expr('+3m'), { kind: 'Interval', value: num('3'), unit: 'MINUTE', shorthand: true });
    assert.deepEqual(
      expr('now() - 1d'),
      bin('-', call('now'), { kind: 'Interval', value: num('1'), unit: 'DAY', shorthand: true }),
    );
    assert.equal(canon('a - -10s'), 'a - -10s');
  });

  test('a number glued to other letters is an error, not an interval', () => {
    assert.throws(() => parseExpression('5sec + 1'), /Malformed number '5sec' at line 1, column 1/);
  });
});

describe('names', () => {
  test('identifiers keep case; quoted with backticks or double quotes', () => {
    assert.deepEqual(expr('Value'), id('Value'));
    assert.deepEqual(expr('t.col'), id('t', 'col'));
    assert.deepEqual(expr('`my col`'), id('my col'));
    assert.deepEqual(expr('"x"."y"'), id('x', 'y'));
    assert.equal(canon('`select`'), '`select`');
    assert.equal(canon('`a b`.c'), '`a b`.c');
  });

  test('* EXCEPT forms, qualified star, COLUMNS', () => {
    assert.deepEqual(expr('*'), { kind: 'Asterisk' });
    assert.deepEqual(expr('* except _tp_time'), { kind: 'Asterisk', except: ['_tp_time'] });
    assert.deepEqual(expr('* EXCEPT (a, b)'), { kind: 'Asterisk', except: ['a', 'b'] });
    assert.deepEqual(expr('(* except _tp_time)'), { kind: 'Asterisk', except: ['_tp_time'] });
    assert.deepEqual(expr('t.*'), { kind: 'Asterisk', qualifier: ['t'] });
    assert.deepEqual(expr("COLUMNS('^a')"), { kind: 'Columns', pattern: '^a' });
    assert.deepEqual(expr('columns(a, b) except b'), {
      kind: 'Columns',
      columns: [id('a'), id('b')],
      except: ['b'],
    });
    assert.equal(canon('* except _tp_time'), '* EXCEPT (_tp_time)');
  });
});

describe('operators and precedence (ClickHouse order)', () => {
  test('* binds tighter than +, + tighter than comparison, AND tighter than OR', () => {
    assert.deepEqual(expr('1 + 2 * 3'), bin('+', num('1'), bin('*', num('2'), num('3'))));
    assert.deepEqual(
      expr('a = 1 or b = 2 and c = 3'),
      bin(
        'OR',
        bin('=', id('a'), num('1')),
        bin('AND', bin('=', id('b'), num('2')), bin('=', id('c'), num('3'))),
      ),
    );
    assert.deepEqual(expr('a - b - c'), bin('-', bin('-', id('a'), id('b')), id('c')));
  });

  test('NOT is below comparison: NOT a = b is NOT (a = b)', () => {
    assert.deepEqual(expr('not a = b'), { kind: 'Unary', op: 'NOT', operand: bin('=', id('a'), id('b')) });
  });

  test('== and <> normalise; MOD and % are one operator; DIV stays', () => {
    assert.deepEqual(expr('a == b'), bin('=', id('a'), id('b')));
    assert.deepEqual(expr('a <> b'), bin('!=', id('a'), id('b')));
    assert.deepEqual(expr('a mod 2'), bin('%', id('a'), num('2')));
    assert.deepEqual(expr('a div 2'), bin('DIV', id('a'), num('2')));
  });

  test('|| concatenation sits between comparison and +', () => {
    assert.deepEqual(expr("a || 'x' = b"), bin('=', bin('||', id('a'), str('x')), id('b')));
  });

  test('IN, NOT IN, GLOBAL IN with lists and subqueries', () => {
    assert.deepEqual(
      expr('x in (1, 2)'),
      bin('IN', id('x'), { kind: 'Tuple', elements: [num('1'), num('2')] }),
    );
    assert.deepEqual(expr('x not in (1)'), bin('NOT IN', id('x'), num('1')));
    const g = expr('x global in (select 1)');
    assert.equal(g.kind === 'Binary' && g.op, 'GLOBAL IN');
    assert.equal(g.kind === 'Binary' && g.right.kind, 'Subquery');
  });

  test('LIKE, ILIKE, NOT LIKE, BETWEEN, NOT BETWEEN, IS [NOT] NULL', () => {
    assert.deepEqual(expr("s like 'a%'"), bin('LIKE', id('s'), str('a%')));
    assert.deepEqual(expr("s not ilike 'a%'"), bin('NOT ILIKE', id('s'), str('a%')));
    assert.deepEqual(expr('x between 1 and 2 + 3'), {
      kind: 'Between',
      expr: id('x'),
      low: num('1'),
      high: bin('+', num('2'), num('3')),
      not: false,
    });
    assert.deepEqual(expr('x not between 1 and 2'), {
      kind: 'Between',
      expr: id('x'),
      low: num('1'),
      high: num('2'),
      not: true,
    });
    assert.deepEqual(expr('x is not null'), { kind: 'IsNull', expr: id('x'), not: true });
    assert.deepEqual(
      expr('x between 1 and 2 and y'),
      bin('AND', { kind: 'Between', expr: id('x'), low: num('1'), high: num('2'), not: false }, id('y')),
    );
  });

  test('ternary ?:', () => {
    assert.deepEqual(expr('a > 1 ? 2 : 3'), {
      kind: 'Ternary',
      condition: bin('>', id('a'), num('1')),
      whenTrue: num('2'),
      whenFalse: num('3'),
    });
  });

  test('printing adds only the parentheses the tree needs', () => {
    assert.equal(canon('(1 + 2) * 3'), '(1 + 2) * 3');
    assert.equal(canon('1 + (2 * 3)'), '1 + 2 * 3');
    assert.equal(canon('a - (b - c)'), 'a - (b - c)');
    assert.equal(canon('(a or b) and c'), '(a OR b) AND c');
    assert.equal(canon('- -1'), '- -1');
    assert.equal(canon('(-1)::string'), '(-1)::string');
  });
});

describe('postfix: subscripts, tuple elements, casts, JSON paths', () => {
  test('array and map subscripts', () => {
    assert.deepEqual(expr('arr[1]'), { kind: 'Subscript', object: id('arr'), index: num('1') });
    assert.deepEqual(expr("tags['k']"), { kind: 'Subscript', object: id('tags'), index: str('k') });
  });

  test('tuple element by position', () => {
    assert.deepEqual(expr('st.1'), { kind: 'TupleElement', object: id('st'), index: 1 });
  });

  test('CAST(x AS t) and x::t keep the type as written', () => {
    const c = expr('cast(x as low_cardinality(string))');
    assert.equal(c.kind, 'Cast');
    assert.equal(c.kind === 'Cast' && c.syntax, 'cast');
    assert.deepEqual(c.kind === 'Cast' && c.type, {
      name: 'low_cardinality',
      args: [{ kind: 'type', type: { name: 'string', args: [], parens: false } }],
      parens: true,
    });
    const d = expr("x::datetime64(3, 'UTC')");
    assert.equal(d.kind === 'Cast' && d.syntax, 'colons');
    assert.equal(canon("x::datetime64(3, 'UTC')"), "x::datetime64(3, 'UTC')");
    assert.equal(canon("cast(x, 'int32')"), "cast(x, 'int32')");
  });

  test('JSON access raw:key, raw:a.b, raw:a::int, raw:b[*]', () => {
    assert.deepEqual(expr('raw:key'), { kind: 'JsonAccess', object: id('raw'), path: 'key' });
    assert.deepEqual(expr('raw:a.b'), { kind: 'JsonAccess', object: id('raw'), path: 'a.b' });
    const c = expr('raw:a::int');
    assert.equal(c.kind, 'Cast');
    assert.deepEqual(c.kind === 'Cast' && c.expr, { kind: 'JsonAccess', object: id('raw'), path: 'a' });
    assert.deepEqual(expr('raw:b[*]'), { kind: 'JsonAccess', object: id('raw'), path: 'b[*]' });
    assert.equal(canon('raw:a.b'), 'raw:a.b');
  });
});

describe('calls', () => {
  test('function names keep their case; DISTINCT; parametric ClickHouse form', () => {
    assert.deepEqual(expr('to_String(x)'), call('to_String', id('x')));
    assert.deepEqual(expr('count(distinct x)'), { ...call('count', id('x')), distinct: true });
    assert.deepEqual(expr('quantile(x, 0.9)'), call('quantile', id('x'), num('0.9')));
    assert.deepEqual(expr('quantile(0.9)(x)'), { ...call('quantile', id('x')), params: [num('0.9')] });
    assert.deepEqual(expr('count()'), call('count'));
    assert.deepEqual(expr('count(*)'), call('count', { kind: 'Asterisk' }));
  });

  test('lambdas with one and several parameters', () => {
    assert.deepEqual(
      expr('array_map(x -> x + 1, arr)'),
      call('array_map', { kind: 'Lambda', params: ['x'], body: bin('+', id('x'), num('1')) }, id('arr')),
    );
    assert.deepEqual(expr('(x, y) -> x + y'), {
      kind: 'Lambda',
      params: ['x', 'y'],
      body: bin('+', id('x'), id('y')),
    });
  });

  test('CASE with and without operand', () => {
    assert.deepEqual(expr('case when a then 1 else 2 end'), {
      kind: 'Case',
      whens: [{ when: id('a'), result: num('1') }],
      else: num('2'),
    });
    assert.deepEqual(expr('case x when 1 then 2 end'), {
      kind: 'Case',
      operand: id('x'),
      whens: [{ when: num('1'), result: num('2') }],
    });
  });

  test('window functions: OVER (PARTITION BY .. ORDER BY .. frame), OVER name', () => {
    const e = expr('sum(x) over (partition by k order by t desc rows between 1 preceding and current row)');
    assert.equal(e.kind, 'Function');
    if (e.kind !== 'Function' || typeof e.over !== 'object') throw new Error('expected OVER spec');
    assert.deepEqual(e.over.partitionBy, [id('k')]);
    assert.deepEqual(e.over.orderBy, [{ kind: 'OrderItem', expr: id('t'), direction: 'DESC' }]);
    assert.deepEqual(e.over.frame, {
      units: 'ROWS',
      start: { kind: 'PRECEDING', offset: num('1') },
      end: { kind: 'CURRENT ROW' },
    });
    assert.deepEqual(expr('row_number() over w'), { ...call('row_number'), over: 'w' });
    assert.equal(
      canon('max(value) over(partition by id, location)'),
      'max(value) OVER (PARTITION BY id, location)',
    );
  });

  test('aggregate FILTER (WHERE ..)', () => {
    assert.deepEqual(expr("max(s) filter (where subject = 'Math')"), {
      ...call('max', id('s')),
      filter: bin('=', id('subject'), str('Math')),
    });
  });

  test('aliases inside expressions', () => {
    assert.deepEqual(expr('f(x as y)'), call('f', { kind: 'Alias', expr: id('x'), alias: 'y' }));
    assert.equal(canon('(a as b) + 1'), '(a AS b) + 1');
  });

  test('session range bounds: [a, b) and (a, b]', () => {
    assert.deepEqual(expr("[s = 'a', s = 'b')"), {
      kind: 'Range',
      start: bin('=', id('s'), str('a')),
      end: bin('=', id('s'), str('b')),
      startInclusive: true,
      endInclusive: false,
    });
    assert.deepEqual(expr('(a, b]'), {
      kind: 'Range',
      start: id('a'),
      end: id('b'),
      startInclusive: false,
      endInclusive: true,
    });
    assert.equal(canon('[a, b)'), '[a, b)');
  });
});

describe('spans', () => {
  test('every node carries the source range it came from', () => {
    const text = 'a + f(b, 1)';
    const e = parseExpression(text);
    assert.deepEqual(e.span, { start: 0, end: text.length });
    if (e.kind !== 'Binary' || e.right.kind !== 'Function') throw new Error('shape');
    assert.equal(text.slice(e.right.span.start, e.right.span.end), 'f(b, 1)');
    assert.equal(text.slice(e.right.args[1]!.span.start, e.right.args[1]!.span.end), '1');
  });
});
