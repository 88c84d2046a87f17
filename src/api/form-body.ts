import { err } from '../errors/tributary-error.ts';
import { MultipartError, multipartBoundary, parseMultipart } from './multipart.ts';

/**
 * The fields of a form body, `multipart/form-data` or `application/x-www-form-urlencoded`, by
 * name (a value as bytes). The body arrives as raw bytes (server.ts's catch-all parser). Any
 * other Content-Type answers 415; a malformed body or a field sent twice answers 400.
 */
export function formFields(contentType: string | undefined, body: unknown): Map<string, Buffer> {
  const raw = Buffer.isBuffer(body) ? body : typeof body === 'string' ? Buffer.from(body) : undefined;
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const fields = new Map<string, Buffer>();
  const add = (name: string, value: Buffer) => {
    if (fields.has(name)) throw err('INVALID_FIELD', { field: name, detail: 'is sent more than once' });
    fields.set(name, value);
  };
  if (type === 'application/x-www-form-urlencoded') {
    for (const [name, value] of new URLSearchParams((raw ?? Buffer.alloc(0)).toString('utf8'))) {
      add(name, Buffer.from(value, 'utf8'));
    }
    return fields;
  }
  if (type === 'multipart/form-data') {
    try {
      const boundary = multipartBoundary(contentType) as string;
      for (const part of parseMultipart(raw ?? Buffer.alloc(0), boundary)) add(part.name, part.data);
    } catch (e) {
      if (e instanceof MultipartError) throw err('INVALID_REQUEST', { detail: e.message });
      throw e;
    }
    return fields;
  }
  throw err('UNSUPPORTED_MEDIA_TYPE', {
    type: `${type || '(none)'}; send multipart/form-data or application/x-www-form-urlencoded`,
  });
}
