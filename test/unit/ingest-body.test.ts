import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TributaryError } from '../../src/errors/tributary-error.ts';
import {
  compactBodyRows,
  type ParsedRows,
  parseIngestBody,
  parseNumber,
  splitJsonValues,
} from '../../src/stream/ingest-body.ts';

const b = (s: string) => Buffer.from(s);

function malformed(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof TributaryError, String(e));
    assert.equal(e.errorName, 'INGEST_MALFORMED');
    assert.match(e.message, message);
    return true;
  });
}

function compact(p: ParsedRows): { columns: string[]; rows: unknown[][] } {
  assert.equal(p.kind, 'compact');
  return p as unknown as { columns: string[]; rows: unknown[][] };
}

test('compact: columns and rows; the passthrough is the rows of "data" as sent', () => {
  const p = parseIngestBody(b('{"columns":["a","b"],"data":[[1,"x"],\n [2,"y"]]}\n'), 'compact');
  assert.deepEqual(compact(p).columns, ['a', 'b']);
  assert.deepEqual(compact(p).rows, [
    [1, 'x'],
    [2, 'y'],
  ]);
  assert.equal(p.passthrough?.toString(), '[1,"x"],\n [2,"y"]');
});

test('compact: no passthrough unless the keys are exactly columns then data', () => {
  assert.equal(parseIngestBody(b('{"data":[[1]],"columns":["a"]}'), 'compact').passthrough, undefined);
  assert.equal(parseIngestBody(b('{"columns":["a"],"data":[[1]],"x":1}'), 'compact').passthrough, undefined);
  assert.equal(
    parseIngestBody(b('{"columns":["a"],"data":[[1]]}'), 'compact', 'iso-8859-1').passthrough,
    undefined,
  );
});

test('compact: a blank line inside the rows is collapsed in the passthrough (the engine would stop there)', () => {
  const p = parseIngestBody(b('{"columns":["a"],"data":[[1],\n\n\n[2],\n \r\n[3]]}'), 'compact');
  assert.equal(p.passthrough?.toString(), '[1],\n[2],\n[3]');
});

test('compact: malformed bodies', () => {
  malformed(() => parseIngestBody(b(''), 'compact'), /empty/);
  malformed(() => parseIngestBody(b('{"columns":["a"],"data":[[1]'), 'compact'), /Malformed ingest body/);
  malformed(() => parseIngestBody(b('[[1]]'), 'compact'), /expected an object/);
  malformed(() => parseIngestBody(b('{"columns":"a","data":[]}'), 'compact'), /"columns" must be an array/);
  malformed(() => parseIngestBody(b('{"columns":[1],"data":[]}'), 'compact'), /"columns" must be an array/);
  malformed(() => parseIngestBody(b('{"columns":["a"]}'), 'compact'), /"data" must be an array/);
});

test('compact: a UTF-8 BOM is skipped, and a latin-1 body is decoded', () => {
  const p = parseIngestBody(
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b('{"columns":["a"],"data":[["x"]]}')]),
    'compact',
  );
  assert.equal(p.passthrough?.toString(), '["x"]');
  const latin = Buffer.from('{"columns":["a"],"data":[["caf\xe9"]]}', 'latin1');
  assert.deepEqual(compact(parseIngestBody(latin, 'compact', 'iso-8859-1')).rows, [['café']]);
});

test('compact: integers beyond 2^53 are kept exactly by the lossless parse', () => {
  const p = parseIngestBody(b('{"columns":["a","f"],"data":[[9223372036854775807, 0.125]]}'), 'compact');
  assert.ok(p.lossless);
  const l = compact(p.lossless());
  assert.deepEqual(l.rows, [['9223372036854775807', 0.125]]);
  assert.equal(p.lossless().lossless, undefined);
});

test('lossless parse: integers in exponent or fraction form past 2^53 become their exact digits', () => {
  const p = parseIngestBody(
    b('{"columns":["a","b","c","d","e"],"data":[[1e19, 1.18e21, -1E+20, 1.5, 1e400]]}'),
    'compact',
  );
  assert.deepEqual(compact(p.lossless?.() as ParsedRows).rows, [
    ['10000000000000000000', '1180000000000000000000', '-100000000000000000000', 1.5, Infinity],
  ]);
  assert.equal(parseNumber('100000000000000000000.000'), '100000000000000000000');
  assert.equal(parseNumber('9007199254740993'), '9007199254740993');
  assert.equal(parseNumber('12'), 12);
});

test('streaming: NDJSON, concatenated objects, commas and whitespace between them', () => {
  for (const text of [
    '{"a":1}\n{"a":2}\n',
    '{"a":1}{"a":2}',
    '{"a":1} , {"a":2}',
    '\r\n{"a":1}\r\n\r\n{"a":2}\r\n',
    ' {"a":1}\t{"a":2}',
  ]) {
    const p = parseIngestBody(b(text), 'streaming');
    assert.equal(p.kind, 'objects');
    assert.deepEqual((p as { objects: unknown[] }).objects, [{ a: 1 }, { a: 2 }], JSON.stringify(text));
    assert.ok(p.passthrough);
    assert.doesNotMatch(p.passthrough.toString(), /\n\s*\n/);
  }
  const nested = parseIngestBody(b('{"a":{"b":"}{"}}\n{"a":[1,{"c":2}]}'), 'streaming');
  assert.deepEqual((nested as { objects: unknown[] }).objects, [{ a: { b: '}{' } }, { a: [1, { c: 2 }] }]);
  const empty = parseIngestBody(b('  \n'), 'streaming');
  assert.deepEqual((empty as { objects: unknown[] }).objects, []);
});

test('streaming: a bad row is named', () => {
  malformed(() => parseIngestBody(b('{"a":1}\n{"a":}\n'), 'streaming'), /row 2/);
  malformed(() => parseIngestBody(b('{"a":1}\n[1,2]\n'), 'streaming'), /row 2 is not a JSON object/);
  malformed(() => parseIngestBody(b('{"a":1}\n42'), 'streaming'), /row 2 is not a JSON object/);
  malformed(() => parseIngestBody(b('{"a":1}{"a"'), 'streaming'), /row 2/);
});

test('splitJsonValues always moves on: whitespace JSON does not know, and binary bodies', () => {
  // \v, \f and U+00A0 are whitespace to a regular expression but not to JSON: once, these stalled
  // the split forever (a gzip body sent without Content-Encoding answered 500 after 30 s).
  assert.deepEqual(splitJsonValues('\u000b{"a":1}\f\u00a0'), ['\u000b', '{"a":1}', '\f\u00a0']);
  const binary = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x0b, 0x0c, 0xa0, 0x7b, 0x00]);
  assert.throws(
    () => parseIngestBody(binary, 'streaming'),
    (e: unknown) => e instanceof TributaryError && e.status === 400,
  );
});

test('splitJsonValues splits top-level values and respects strings and escapes', () => {
  assert.deepEqual(splitJsonValues('{"a":"x\\"}{"}{"b":[1,{}]} 3 "s"'), [
    '{"a":"x\\"}{"}',
    '{"b":[1,{}]}',
    '3',
    '"s"',
  ]);
});

test('raw: the whole body is one row of column raw; lines: one row per non-empty line', () => {
  assert.deepEqual(compact(parseIngestBody(b('hello\nworld\n'), 'raw')), {
    kind: 'compact',
    columns: ['raw'],
    rows: [['hello\nworld\n']],
  });
  assert.deepEqual(compact(parseIngestBody(b(''), 'raw')).rows, []);
  assert.deepEqual(compact(parseIngestBody(b('a\r\nb\n\nc'), 'lines')).rows, [['a'], ['b'], ['c']]);
  assert.deepEqual(compact(parseIngestBody(Buffer.from('caf\xe9\n', 'latin1'), 'lines', 'latin1')).rows, [
    ['café'],
  ]);
});

test('compactBodyRows: the columns and the same rows view as the parse, from the bytes alone', () => {
  const body = b('\ufeff { "columns" : ["a", "b"], "data": [[1,"x"],\n [2,"]]},[\\"y"]] } ');
  const found = compactBodyRows(body);
  assert.ok(found);
  assert.deepEqual(found.columns, ['a', 'b']);
  const parsed = parseIngestBody(body, 'compact');
  assert.ok(parsed.passthrough);
  assert.equal(found.rows.buffer, parsed.passthrough.buffer);
  assert.equal(found.rows.byteOffset, parsed.passthrough.byteOffset);
  assert.equal(found.rows.length, parsed.passthrough.length);
  assert.equal(found.rows.toString(), '[1,"x"],\n [2,"]]},[\\"y"]');
  // Not found: other shapes, bad column lists, and bodies with a blank line (the engine would stop there).
  for (const text of [
    '{"data":[[1]],"columns":["a"]}',
    '{"columns":"a","data":[[1]]}',
    '{"columns":[1],"data":[[1]]}',
    '{"columns":["a"],"data":[[1]],"x":1}',
    '[[1]]',
    '{"columns":["a"],"data":[[1],\n \n[2]]}',
  ])
    assert.equal(compactBodyRows(b(text)), undefined, text);
});
