/**
 * A small parser of `multipart/form-data` bodies (RFC 7578) for the few routes that take a file
 * upload. The whole body is already in memory and bounded by the route's body limit; the parser
 * bounds the number of parts and the size of each part's headers, and refuses anything malformed
 * rather than guessing.
 */

export interface MultipartPart {
  /** The form field name from `Content-Disposition: form-data; name="..."`. */
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export interface MultipartLimits {
  maxParts: number;
  maxHeaderBytes: number;
}

export const DEFAULT_MULTIPART_LIMITS: MultipartLimits = { maxParts: 16, maxHeaderBytes: 8 * 1024 };

export class MultipartError extends Error {}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The boundary of a `multipart/form-data` Content-Type, or undefined when it is not one. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const [type, ...params] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'multipart/form-data') return undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    let value = p.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    // RFC 2046: 1 to 70 characters from a restricted set, not ending in a space.
    if (!/^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/.test(value)) {
      throw new MultipartError(`the multipart boundary "${value.slice(0, 80)}" is not valid`);
    }
    return value;
  }
  throw new MultipartError('multipart/form-data without a boundary parameter');
}

/** Parameters of a header value: `form-data; name="file"; filename="a.lic"`. */
function headerParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /;\s*([A-Za-z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g;
  for (const m of value.matchAll(re)) {
    const key = (m[1] ?? '').toLowerCase();
    const v = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
    if (out.has(key)) throw new MultipartError(`a part's header repeats the parameter ${key}`);
    out.set(key, v);
  }
  return out;
}

function parsePartHeaders(raw: string): Omit<MultipartPart, 'data'> {
  let name: string | undefined;
  let filename: string | undefined;
  let contentType: string | undefined;
  for (const line of raw.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError(`a part has a malformed header line "${line.slice(0, 80)}"`);
    const header = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (header === 'content-disposition') {
      if (!/^form-data\s*(;|$)/i.test(value)) throw new MultipartError('a part is not form-data');
      const params = headerParams(value.slice(value.indexOf('form-data') + 'form-data'.length));
      name = params.get('name');
      filename = params.get('filename');
    } else if (header === 'content-type') {
      contentType = value;
    }
  }
  if (name === undefined || name === '') throw new MultipartError('a part has no Content-Disposition name');
  return { name, ...(filename !== undefined ? { filename } : {}), ...(contentType ? { contentType } : {}) };
}

/**
 * Split a `multipart/form-data` body into its parts. The body may start with a preamble and end
 * with an epilogue (both ignored); it must contain the closing delimiter.
 */
export function parseMultipart(
  body: Buffer,
  boundary: string,
  limits: MultipartLimits = DEFAULT_MULTIPART_LIMITS,
): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const between = Buffer.from(`\r\n--${boundary}`);
  let pos: number;
  if (body.subarray(0, delimiter.length).equals(delimiter)) pos = delimiter.length;
  else {
    const first = body.indexOf(between);
    if (first < 0) throw new MultipartError('the body does not contain the multipart boundary');
    pos = first + between.length;
  }
  const parts: MultipartPart[] = [];
  for (;;) {
    // After a delimiter: "--" closes the body; otherwise optional white space, then CRLF.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts;
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (!body.subarray(pos, pos + 2).equals(CRLF)) {
      throw new MultipartError('the multipart body ends before its closing boundary');
    }
    pos += 2;
    if (parts.length >= limits.maxParts) throw new MultipartError(`more than ${limits.maxParts} parts`);
    const headerEnd = body.indexOf(HEADER_END, pos);
    if (headerEnd < 0 || headerEnd - pos > limits.maxHeaderBytes) {
      throw new MultipartError(`a part's headers do not end within ${limits.maxHeaderBytes} bytes`);
    }
    const headers = parsePartHeaders(body.subarray(pos, headerEnd).toString('utf8'));
    const dataStart = headerEnd + HEADER_END.length;
    const next = body.indexOf(between, dataStart);
    if (next < 0) throw new MultipartError('the multipart body ends before its closing boundary');
    parts.push({ ...headers, data: body.subarray(dataStart, next) });
    pos = next + between.length;
  }
}
