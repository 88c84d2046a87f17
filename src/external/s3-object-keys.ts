import { err } from '../errors/tributary-error.ts';
import type { CompressionMethod } from './s3-table-settings.ts';

/** Compression by the last extension of an object key (spec §4.C: inferred from the key). */
const COMPRESSION_BY_EXTENSION: Readonly<Record<string, CompressionMethod>> = {
  gz: 'gzip',
  gzip: 'gzip',
  deflate: 'deflate',
  br: 'br',
  xz: 'xz',
  zst: 'zstd',
  zstd: 'zstd',
  lz4: 'lz4',
  bz2: 'bz2',
  snappy: 'snappy',
};

/** Format by the extension before any compression extension. */
const FORMAT_BY_EXTENSION: Readonly<Record<string, string>> = {
  json: 'JSONEachRow',
  jsonl: 'JSONEachRow',
  ndjson: 'JSONEachRow',
  csv: 'CSV',
  tsv: 'TSV',
  tab: 'TSV',
  avro: 'Avro',
};

function extensions(key: string): string[] {
  const base = key.slice(key.lastIndexOf('/') + 1);
  return base
    .split('.')
    .slice(1)
    .map((e) => e.toLowerCase());
}

/** The compression a key's extension names (`none` when it names none). */
export function compressionFromKey(key: string): CompressionMethod {
  const exts = extensions(key);
  return COMPRESSION_BY_EXTENSION[exts[exts.length - 1] ?? ''] ?? 'none';
}

/** The format a key's extension names (`x.json.gz` -> JSONEachRow), if any. */
export function formatFromKey(key: string): string | undefined {
  const exts = extensions(key);
  if (exts.length && COMPRESSION_BY_EXTENSION[exts[exts.length - 1] as string]) exts.pop();
  return FORMAT_BY_EXTENSION[exts[exts.length - 1] ?? ''];
}

/** `dir/part.json.gz` -> [`dir/part`, `.json.gz`]: the extension is everything from the base name's first dot. */
function splitExtension(key: string): [string, string] {
  const slash = key.lastIndexOf('/');
  const dot = key.indexOf('.', slash + 1);
  return dot <= slash + 1 ? [key, ''] : [key.slice(0, dot), key.slice(dot)];
}

/**
 * The timestamp index of a new object: year, month, day, hour, minute, second, millisecond
 * (UTC), `20261125T173005123`-style without the `T`: `20261125173005123`.
 */
export function timestampIndex(at: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}` +
    `${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}${p(at.getUTCMilliseconds(), 3)}`
  );
}

/**
 * The key of a new object written through `template`: the timestamp index goes before the
 * extension (`logs/{_partition_id}/part.json.gz` -> `logs/{_partition_id}/part.20261125173005123.json.gz`);
 * `{_partition_id}` stays for the engine to fill per partition. `suffix` tells apart objects made
 * in the same millisecond.
 */
export function newObjectKey(template: string, index: string): string {
  const [stem, ext] = splitExtension(template);
  return `${stem}.${index}${ext}`;
}

/**
 * The pattern that reads what `write_to` writes: `{_partition_id}` and the timestamp index become
 * `*` (`logs/{_partition_id}/part.json.gz` -> `logs/x/part*.json.gz` with `*` for `x`).
 */
export function readPatternOf(writeTo: string): string {
  const [stem, ext] = splitExtension(writeTo.replaceAll('{_partition_id}', '*'));
  return `${stem}*${ext}`;
}

/**
 * A read_from pattern: `*`, `**`, `?`, `{a,b}` and `{N..M}` (leading zeroes kept) are expanded by
 * the engine when SELECT runs; here only the shape is checked (balanced braces, ranges of numbers).
 */
export function checkKeyPattern(table: string, setting: string, pattern: string): void {
  const bad = (detail: string) => err('EXTERNAL_TABLE_BAD_SETTING', { table, setting, detail });
  if (pattern.startsWith('/')) throw bad("must be an object key or pattern without a leading '/'");
  let depth = 0;
  let start = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '{') {
      if (depth) throw bad(`has a '{' inside braces at position ${i + 1}`);
      depth = 1;
      start = i;
    } else if (c === '}') {
      if (!depth) throw bad(`has an unmatched '}' at position ${i + 1}`);
      depth = 0;
      const body = pattern.slice(start + 1, i);
      if (body === '') throw bad(`has empty braces at position ${start + 1}`);
      if (body.includes('..')) {
        const m = /^(\d+)\.\.(\d+)$/.exec(body);
        if (!m) throw bad(`has a malformed range {${body}}: write {N..M} with non-negative integers`);
        if (Number(m[1]) > Number(m[2])) throw bad(`has a range {${body}} whose start is past its end`);
      }
    }
  }
  if (depth) throw bad(`has an unclosed '{' at position ${start + 1}`);
}
