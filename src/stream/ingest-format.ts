import { err } from '../errors/tributary-error.ts';

/**
 * The four ingest body formats (api-notes.md §2.1) and how a request picks one: the `format` query
 * parameter wins; otherwise the Content-Type, in every spelling of the contract:
 *
 * | format    | Content-Type                                                                         |
 * |-----------|--------------------------------------------------------------------------------------|
 * | compact   | application/json, application/vnd.<vendor>+json, either with format=compact or compat |
 * | streaming | application/x-ndjson (also ndjson/jsonl spellings), application/json or vnd with      |
 * |           | format=streaming or stream                                                           |
 * | raw       | text/plain, text/plain;format=raw                                                    |
 * | lines     | text/plain;format=lines                                                              |
 *
 * No Content-Type means compact (the API's default). A `charset` parameter is honoured.
 */
export const INGEST_FORMATS = ['compact', 'streaming', 'raw', 'lines'] as const;
export type IngestFormat = (typeof INGEST_FORMATS)[number];

export interface ResolvedFormat {
  format: IngestFormat;
  /** WHATWG encoding label; `utf-8` unless the Content-Type names another. */
  charset: string;
}

const FORMAT_ALIASES: Readonly<Record<string, IngestFormat>> = {
  compact: 'compact',
  compat: 'compact',
  streaming: 'streaming',
  stream: 'streaming',
  raw: 'raw',
  lines: 'lines',
  line: 'lines',
};

const NDJSON_TYPES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonl',
  'application/jsonlines',
  'application/x-jsonlines',
  'application/json-seq',
]);

interface MediaType {
  type: string;
  params: Map<string, string>;
}

export function parseMediaType(header: string): MediaType {
  const [head = '', ...rest] = header.split(';');
  const params = new Map<string, string>();
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const key = p.slice(0, eq).trim().toLowerCase();
    const value = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (key) params.set(key, value);
  }
  return { type: head.trim().toLowerCase(), params };
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || /^application\/vnd\.[^/;+]+\+json$/.test(type);
}

function checkedCharset(raw: string | undefined, contentType: string): string {
  const label = (raw ?? 'utf-8').trim().toLowerCase();
  try {
    new TextDecoder(label);
  } catch {
    throw err('UNSUPPORTED_MEDIA_TYPE', { type: `${contentType} (unknown charset ${label})` });
  }
  return label;
}

/** Resolutions already made, by `format` parameter then Content-Type (pure; bounded). */
const resolved = new Map<string, Map<string, ResolvedFormat>>();
const RESOLVED_MAX = 256;
let resolvedCount = 0;

/** Pick the body format of an ingest request; throws INVALID_FIELD or UNSUPPORTED_MEDIA_TYPE. */
export function resolveIngestFormat(
  contentType: string | undefined,
  formatParam: string | undefined,
): ResolvedFormat {
  // Every request of a client sends the same header: its answer is looked up rather than parsed
  // again (a TextDecoder is built to check the charset). Refusals are not remembered. Two levels
  // rather than one key made of both: no string built per request.
  const byType = resolved.get(formatParam ?? '');
  const known = byType?.get(contentType ?? '');
  if (known) return known;
  const r = resolveUncached(contentType, formatParam);
  if (resolvedCount >= RESOLVED_MAX) {
    resolved.clear();
    resolvedCount = 0;
  }
  let types = resolved.get(formatParam ?? '');
  if (!types) {
    types = new Map();
    resolved.set(formatParam ?? '', types);
  }
  types.set(contentType ?? '', Object.freeze(r));
  resolvedCount++;
  return r;
}

function resolveUncached(contentType: string | undefined, formatParam: string | undefined): ResolvedFormat {
  const media = contentType?.trim() ? parseMediaType(contentType) : undefined;
  const charset = checkedCharset(media?.params.get('charset'), contentType ?? '');
  if (formatParam !== undefined && formatParam !== '') {
    const f = FORMAT_ALIASES[formatParam.trim().toLowerCase()];
    if (!f)
      throw err('INVALID_FIELD', { field: 'format', detail: `must be one of ${INGEST_FORMATS.join(', ')}` });
    return { format: f, charset };
  }
  if (!media || media.type === '' || media.type === '*/*') return { format: 'compact', charset };
  const sub = media.params.get('format')?.toLowerCase();
  const named = sub === undefined ? undefined : FORMAT_ALIASES[sub];
  if (sub !== undefined && !named) throw err('UNSUPPORTED_MEDIA_TYPE', { type: contentType ?? '' });
  if (isJsonType(media.type)) {
    if (named === undefined || named === 'compact') return { format: 'compact', charset };
    if (named === 'streaming') return { format: 'streaming', charset };
  } else if (NDJSON_TYPES.has(media.type)) {
    if (named === undefined || named === 'streaming') return { format: 'streaming', charset };
  } else if (media.type === 'text/plain') {
    if (named === undefined || named === 'raw') return { format: 'raw', charset };
    if (named === 'lines') return { format: 'lines', charset };
  }
  throw err('UNSUPPORTED_MEDIA_TYPE', { type: contentType ?? '' });
}
