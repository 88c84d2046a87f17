// The stateless runner's printing of results (scripts/stateless/value-text.ts, result-format.ts):
// values as Tributary's events carry them (JSON read losslessly) back to the engine's text forms.
// The expected strings are what the engine itself prints for the same values in these formats.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'lossless-json';
import { formatOf, renderResult, UnsupportedFormat } from '../../scripts/stateless/result-format.ts';
import { csvValue, escapeText, tsvValue } from '../../scripts/stateless/value-text.ts';

/** A row as the runner receives it: a JSON array parsed losslessly. */
const row = (json: string) => parse(json) as unknown[];

test('TabSeparated escapes strings; NULL is \\N; bools are true/false', () => {
  assert.equal(escapeText("a\tb\nc\\d'e"), "a\\tb\\nc\\\\d\\'e");
  assert.equal(escapeText('x\0y\b\f\r'), 'x\\0y\\b\\f\\r');
  // other control characters are printed raw, as the engine does
  assert.equal(escapeText('\u000b\u001a'), '\u000b\u001a');
  assert.equal(tsvValue('string', "a\tb\nc\\d'e"), "a\\tb\\nc\\\\d\\'e");
  assert.equal(tsvValue('nullable(string)', null), '\\N');
  assert.equal(tsvValue('bool', true), 'true');
  assert.equal(tsvValue('bool', false), 'false');
  assert.equal(tsvValue('fixed_string(4)', 'ab\u0000\u0000'), 'ab\\0\\0');
  assert.equal(tsvValue('string', "a\tb'", true), "a\tb'");
});

test('numbers print exactly as the engine wrote them, also beyond 2^53 and nan/inf', () => {
  const [big, f32, huge, small, nan, inf, dec, neg0] = row(
    '[123456789012345678901, 58.3, 100000000000000000000, 1.5e-7, "nan", "-inf", 1.5, -0]',
  );
  assert.equal(tsvValue('uint128', big), '123456789012345678901');
  assert.equal(tsvValue('float32', f32), '58.3');
  assert.equal(tsvValue('float64', huge), '100000000000000000000');
  assert.equal(tsvValue('float64', small), '1.5e-7');
  assert.equal(tsvValue('float64', nan), 'nan');
  assert.equal(tsvValue('float64', inf), '-inf');
  assert.equal(tsvValue('decimal(9, 2)', dec), '1.5');
  assert.equal(tsvValue('float64', neg0), '-0');
  // 128-bit integers arrive as strings: printed bare
  assert.equal(tsvValue('int128', '5'), '5');
});

test('arrays, tuples and maps: quoted strings inside, NULL inside, no spaces', () => {
  const [arr, tup, nulls, m, dates, named, nested, enums] = row(
    '[["a\\tb","x\'y","back\\\\s"], [1,"q\'",null], [null,1], {"k\'":1.5}, ["2020-01-01"], {"x":1,"y":"a"}, [{"a":[1,2]}], ["a"]]',
  );
  assert.equal(tsvValue('array(string)', arr), "['a\\tb','x\\'y','back\\\\s']");
  assert.equal(tsvValue('tuple(uint8, string, nullable(uint8))', tup), "(1,'q\\'',NULL)");
  assert.equal(tsvValue('array(nullable(uint8))', nulls), '[NULL,1]');
  assert.equal(tsvValue('map(string, float64)', m), "{'k\\'':1.5}");
  assert.equal(tsvValue('array(date)', dates), "['2020-01-01']");
  assert.equal(tsvValue('tuple(x int8, y string)', named), "(1,'a')");
  assert.equal(tsvValue('array(map(string, tuple(uint8, uint8)))', nested), "[{'a':(1,2)}]");
  assert.equal(tsvValue("array(enum8('a' = 1))", enums), "['a']");
  assert.equal(tsvValue('tuple(int8)', row('[[1]]')[0]), '(1)');
  assert.equal(tsvValue('array(bool)', row('[[true,false]]')[0]), '[true,false]');
  assert.equal(tsvValue('map(uint8, string)', row('[{"1":"a"}]')[0]), "{1:'a'}");
  assert.equal(tsvValue('point', row('[[1.5,2]]')[0]), '(1.5,2)');
  assert.equal(tsvValue('ring', row('[[[1,2],[3,4]]]')[0]), '[(1,2),(3,4)]');
});

test('CSV: strings and composites double-quoted, tuples as several fields', () => {
  const [n, s, nul, b, arr, tup, d] = row('[1, "x\\"y,z", null, true, [1,2], [1,"a"], "2020-01-01"]');
  assert.equal(
    [
      csvValue('uint8', n),
      csvValue('string', s),
      csvValue('nullable(string)', nul),
      csvValue('bool', b),
      csvValue('array(uint8)', arr),
      csvValue('tuple(uint8, string)', tup),
      csvValue('date', d),
    ].join(','),
    '1,"x""y,z",\\N,true,"[1,2]",1,"a","2020-01-01"',
  );
});

test('a statement asks for its format with a trailing FORMAT clause', () => {
  assert.equal(formatOf('SELECT 1 FORMAT TSVWithNames'), 'TSVWithNames');
  assert.equal(formatOf('select 1 format Null  '), 'Null');
  assert.equal(formatOf('SELECT format'), undefined);
  assert.equal(formatOf('SELECT 1'), undefined);
});

test('results print in TabSeparated and the other formats the runner knows', () => {
  const columns = [
    { name: 'a', type: 'uint64' },
    { name: 'b\tc', type: 'string' },
  ];
  const rows = [row('[1, "x"]'), row('[123456789012345678, "y/z"]')];
  assert.equal(renderResult(undefined, columns, rows), '1\tx\n123456789012345678\ty/z\n');
  assert.equal(renderResult('TSVWithNames', columns, rows), 'a\tb\\tc\n1\tx\n123456789012345678\ty/z\n');
  assert.equal(renderResult('TabSeparatedWithNamesAndTypes', columns, []), 'a\tb\\tc\nuint64\tstring\n');
  assert.equal(renderResult('CSVWithNames', columns, rows.slice(0, 1)), '"a","b\tc"\n1,"x"\n');
  assert.equal(renderResult('Null', columns, rows), '');
  assert.equal(
    renderResult('JSONEachRow', columns, rows),
    '{"a":"1","b\\tc":"x"}\n{"a":"123456789012345678","b\\tc":"y\\/z"}\n',
  );
  assert.equal(
    renderResult(
      'Vertical',
      [
        { name: 'x', type: 'uint8' },
        { name: 'long', type: 'nullable(string)' },
      ],
      [row('[0, "a\\tb"]'), row('[1, null]')],
    ),
    'Row 1:\n──────\nx:    0\nlong: a\tb\n\nRow 2:\n──────\nx:    1\nlong: ᴺᵁᴸᴸ\n',
  );
  assert.throws(() => renderResult('PrettyCompact', columns, rows), UnsupportedFormat);
});

test("a datetime whose type names a zone ends in the zone's offset, as Proton prints it", () => {
  assert.equal(tsvValue("datetime('UTC')", '2000-01-02 03:00:00'), '2000-01-02 03:00:00Z');
  assert.equal(tsvValue("datetime64(3, 'UTC')", '2000-01-02 03:00:00.123'), '2000-01-02 03:00:00.123Z');
  assert.equal(tsvValue("datetime('Europe/Moscow')", '1970-01-01 03:00:00'), '1970-01-01 03:00:00+03:00');
  assert.equal(tsvValue("datetime('Asia/Kolkata')", '2017-12-05 10:37:47'), '2017-12-05 10:37:47+05:30');
  assert.equal(
    tsvValue("datetime('Pacific/Kiritimati')", '1990-01-02 03:04:05'),
    '1990-01-02 03:04:05-10:00',
  );
  // daylight saving time: the offset of that date
  assert.equal(tsvValue("datetime('Europe/Berlin')", '2020-07-01 12:00:00'), '2020-07-01 12:00:00+02:00');
  assert.equal(tsvValue("datetime('Europe/Berlin')", '2020-01-01 12:00:00'), '2020-01-01 12:00:00+01:00');
  assert.equal(tsvValue("array(datetime('UTC'))", ['2000-01-02 03:00:00']), "['2000-01-02 03:00:00Z']");
  // without a zone in the type: as it is
  assert.equal(tsvValue('datetime', '2000-01-02 03:00:00'), '2000-01-02 03:00:00');
});
