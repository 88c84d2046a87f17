import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MultipartError, multipartBoundary, parseMultipart } from '../../src/api/multipart.ts';

const B = 'XyZ-boundary';
const body = (s: string) => Buffer.from(s.replace(/\n/g, '\r\n'), 'latin1');

test('boundary from the Content-Type: plain, quoted, case-insensitive; other types answer undefined', () => {
  assert.equal(multipartBoundary(`multipart/form-data; boundary=${B}`), B);
  assert.equal(multipartBoundary('Multipart/Form-Data; charset=utf-8; BOUNDARY="a b:c"'), 'a b:c');
  assert.equal(multipartBoundary('application/json'), undefined);
  assert.equal(multipartBoundary(undefined), undefined);
  assert.throws(() => multipartBoundary('multipart/form-data'), /without a boundary/);
  assert.throws(() => multipartBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`), MultipartError);
  assert.throws(() => multipartBoundary('multipart/form-data; boundary=bad{char}'), MultipartError);
});

test('fields and files, with names, filenames, types; data kept byte for byte', () => {
  const binary = Buffer.from([0, 13, 10, 45, 45, 255, 13, 10]);
  const raw = Buffer.concat([
    body(`--${B}\nContent-Disposition: form-data; name="key"\n\nsecret value\n`),
    body(
      `--${B}\ncontent-disposition: form-data; name="file"; filename="a \\"b\\".lic"\nContent-Type: application/octet-stream\n\n`,
    ),
    binary,
    body(`\n--${B}--\n`),
  ]);
  const parts = parseMultipart(raw, B);
  assert.equal(parts.length, 2);
  assert.deepEqual(
    parts.map((p) => [p.name, p.filename, p.contentType]),
    [
      ['key', undefined, undefined],
      ['file', 'a "b".lic', 'application/octet-stream'],
    ],
  );
  assert.equal(parts[0]?.data.toString(), 'secret value');
  assert.deepEqual(parts[1]?.data, binary, 'CRLF and dashes inside the data are data');
});

test('a preamble and an epilogue are ignored; an empty value is an empty buffer', () => {
  const parts = parseMultipart(
    body(`ignored preamble\n--${B}\nContent-Disposition: form-data; name="a"\n\n\n--${B}--\nepilogue`),
    B,
  );
  assert.deepEqual(
    parts.map((p) => [p.name, p.data.length]),
    [['a', 0]],
  );
});

test('malformed bodies are refused, never guessed', () => {
  const cases: Array<[string, Buffer, RegExp]> = [
    ['no boundary at all', body('just text'), /does not contain the multipart boundary/],
    [
      'no closing boundary',
      body(`--${B}\nContent-Disposition: form-data; name="a"\n\nvalue`),
      /before its closing/,
    ],
    [
      'headers never end',
      body(`--${B}\nContent-Disposition: form-data; name="a"\nvalue\n--${B}--`),
      /headers do not end/,
    ],
    ['no name', body(`--${B}\nContent-Disposition: form-data\n\nv\n--${B}--`), /no Content-Disposition name/],
    [
      'not form-data',
      body(`--${B}\nContent-Disposition: attachment; name="a"\n\nv\n--${B}--`),
      /not form-data/,
    ],
    ['bad header line', body(`--${B}\nno colon here\n\nv\n--${B}--`), /malformed header line/],
    ['garbage after a delimiter', body(`--${B}junk\n\nv\n--${B}--`), /before its closing/],
    [
      'repeated parameter',
      body(`--${B}\nContent-Disposition: form-data; name="a"; name="b"\n\nv\n--${B}--`),
      /repeats/,
    ],
  ];
  for (const [what, raw, message] of cases) {
    assert.throws(
      () => parseMultipart(raw, B),
      (e: unknown) => e instanceof MultipartError && message.test(e.message),
      what,
    );
  }
});

test('limits: number of parts and header size', () => {
  const part = (i: number) => `--${B}\nContent-Disposition: form-data; name="f${i}"\n\nv\n`;
  const three = body(`${part(1)}${part(2)}${part(3)}--${B}--`);
  assert.equal(parseMultipart(three, B).length, 3);
  assert.throws(() => parseMultipart(three, B, { maxParts: 2, maxHeaderBytes: 1024 }), /more than 2 parts/);
  const longHeader = body(
    `--${B}\nContent-Disposition: form-data; name="a"\nX-Pad: ${'p'.repeat(200)}\n\nv\n--${B}--`,
  );
  assert.throws(
    () => parseMultipart(longHeader, B, { maxParts: 4, maxHeaderBytes: 100 }),
    /within 100 bytes/,
  );
});
