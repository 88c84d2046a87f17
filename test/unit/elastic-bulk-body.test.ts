import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { decodeBulkBody, splitDecode } from '../../src/connectors/inputs/elastic/bulk-body.ts';
import { EsRequestError } from '../../src/connectors/inputs/elastic/es-error.ts';

const TEXT = '{"index":{"_index":"a"}}\n{"msg":"héllo ✓"}\n';
const LIMIT = 1024 * 1024;

async function decoded(body: Buffer, encoding: string | undefined, limit = LIMIT): Promise<string> {
  return (await decodeBulkBody(body, encoding, limit)).join('');
}

function rejectsWith(status: number, pattern: RegExp) {
  return (e: unknown) => e instanceof EsRequestError && e.status === status && pattern.test(e.reason);
}

test('identity, gzip, x-gzip, deflate (zlib and raw) and br bodies decode to the same text', async () => {
  const raw = Buffer.from(TEXT);
  assert.equal(await decoded(raw, undefined), TEXT);
  assert.equal(await decoded(raw, 'identity'), TEXT);
  assert.equal(await decoded(zlib.gzipSync(raw), 'gzip'), TEXT);
  assert.equal(await decoded(zlib.gzipSync(raw, { level: 1 }), 'GZIP '), TEXT);
  assert.equal(await decoded(zlib.gzipSync(raw), 'x-gzip'), TEXT);
  assert.equal(await decoded(zlib.deflateSync(raw), 'deflate'), TEXT);
  assert.equal(await decoded(zlib.deflateRawSync(raw), 'deflate'), TEXT);
  assert.equal(await decoded(zlib.brotliCompressSync(raw), 'br'), TEXT);
});

test('a gzip body made of several members decodes whole', async () => {
  const body = Buffer.concat([zlib.gzipSync('{"index":{"_index":"a"}}\n'), zlib.gzipSync('{"a":1}\n')]);
  assert.equal(await decoded(body, 'gzip'), '{"index":{"_index":"a"}}\n{"a":1}\n');
});

test('a UTF-8 byte-order mark is dropped', async () => {
  assert.equal(
    await decoded(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT)]), undefined),
    TEXT,
  );
});

test('corrupt compressed data is a 400', async () => {
  await assert.rejects(
    decodeBulkBody(Buffer.from('not gzip at all'), 'gzip', LIMIT),
    rejectsWith(400, /not valid gzip/),
  );
  await assert.rejects(
    decodeBulkBody(Buffer.from('nope'), 'deflate', LIMIT),
    rejectsWith(400, /not valid deflate/),
  );
});

test('an unsupported Content-Encoding is a 400 that names it', async () => {
  await assert.rejects(
    decodeBulkBody(Buffer.from(TEXT), 'zstd', LIMIT),
    rejectsWith(400, /unsupported Content-Encoding \[zstd\]/),
  );
});

test('a body over the limit once decompressed is a 413', async () => {
  const bomb = zlib.gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20));
  assert.ok(bomb.length < 64 * 1024);
  await assert.rejects(
    decodeBulkBody(bomb, 'gzip', LIMIT),
    rejectsWith(413, /decompressed request body is larger than the limit of \[1048576\]/),
  );
});

test('splitDecode cuts at newlines only, and keeps multi-byte characters whole', () => {
  const line = `{"m":"${'é✓'.repeat(3000)}"}\n`;
  const text = line.repeat(40);
  const pieces = splitDecode(Buffer.from(text));
  assert.ok(pieces.length > 1);
  for (const p of pieces.slice(0, -1)) assert.ok(p.endsWith('\n'));
  assert.equal(pieces.join(''), text);
  const long = `${'x'.repeat(200_000)}\nshort\n`;
  assert.deepEqual(splitDecode(Buffer.from(long)), [`${'x'.repeat(200_000)}\n`, 'short\n']);
  assert.deepEqual(splitDecode(Buffer.alloc(0)), []);
});
