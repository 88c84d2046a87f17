import { isAscii } from 'node:buffer';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { EsRequestError } from './es-error.ts';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

/** Bytes per decoded piece, well under V8's ~128 KB large-object threshold (see below). */
const PIECE = 64 * 1024;

/**
 * Decode a request body as the client encoded it (`Content-Encoding`: gzip, x-gzip, deflate — zlib
 * wrapped or raw, both are seen in the wild — br, identity) into text. The decompressed size is
 * capped at `limit` bytes as well (a 413, like the compressed size). Decompression runs on the
 * libuv thread pool, off the event loop.
 *
 * The text comes in pieces of ~64 KB that end at a newline (a longer line makes a longer piece):
 * one string over ~128 KB lands in V8's large-object space, and allocating it costs ten times
 * more than decoding it. A newline byte is never inside a UTF-8 sequence, so the pieces decode
 * independently; pure-ASCII bodies decode as latin1, which is faster.
 */
export async function decodeBulkBody(
  body: Buffer,
  contentEncoding: string | undefined,
  limit: number,
): Promise<string[]> {
  const plain = await decompress(body, (contentEncoding ?? '').trim().toLowerCase(), limit);
  // A UTF-8 byte-order mark is not part of the first action line.
  const start = plain.length >= 3 && plain[0] === 0xef && plain[1] === 0xbb && plain[2] === 0xbf ? 3 : 0;
  return splitDecode(plain, start);
}

export function splitDecode(buf: Buffer, start = 0): string[] {
  const encoding = isAscii(buf) ? 'latin1' : 'utf8';
  const pieces: string[] = [];
  const n = buf.length;
  let pos = start;
  while (pos < n) {
    let end = pos + PIECE;
    if (end >= n) end = n;
    else {
      const nl = buf.lastIndexOf(10, end - 1);
      if (nl >= pos) end = nl + 1;
      else {
        const next = buf.indexOf(10, end);
        end = next < 0 ? n : next + 1;
      }
    }
    pieces.push(buf.toString(encoding, pos, end));
    pos = end;
  }
  return pieces;
}

async function decompress(body: Buffer, encoding: string, limit: number): Promise<Buffer> {
  if (encoding === '' || encoding === 'identity') return body;
  const options = { maxOutputLength: limit };
  try {
    switch (encoding) {
      case 'gzip':
      case 'x-gzip':
        return await gunzip(body, options);
      case 'deflate':
        // RFC 9110 "deflate" is zlib-wrapped; some clients send a raw deflate stream.
        return isZlibHeader(body) ? await inflate(body, options) : await inflateRaw(body, options);
      case 'br':
        return await brotli(body, options);
    }
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit, 'decompressed ');
    throw new EsRequestError(
      400,
      'parse_exception',
      `request body is not valid ${encoding} data: ${(e as Error).message}`,
    );
  }
  throw new EsRequestError(
    400,
    'illegal_argument_exception',
    `unsupported Content-Encoding [${encoding}]; supported: gzip, deflate, br, identity`,
  );
}

function isZlibHeader(b: Buffer): boolean {
  return b.length >= 2 && (b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0;
}

export function tooLarge(limit: number, what = ''): EsRequestError {
  return new EsRequestError(
    413,
    'content_too_long_exception',
    `${what}request body is larger than the limit of [${limit}] bytes (setting max_body_bytes)`,
  );
}
