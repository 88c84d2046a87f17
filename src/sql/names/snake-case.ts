/**
 * ClickHouse camelCase names -> Proton snake_case names, with acronym groups kept as one word
 * (streaming-sql-notes.md §2.2): toDateTime -> to_datetime, lowerUTF8 -> lower_utf8,
 * IPv4NumToString -> ipv4_num_to_string, toUInt32OrNull -> to_uint32_or_null, SHA256 -> sha256.
 * The other direction is not computable from the text (case is lost); see function-catalog.ts.
 */

/** Groups that Proton writes as one lower-case word. Longest first. */
const ACRONYMS = [
  'DateTime64',
  'DateTime32',
  'DateTime',
  'UUIDv4',
  'UUIDv7',
  'UUID',
  'IPv4',
  'IPv6',
  'UTF8',
  'UTF16',
  'UTF32',
  'TDigest',
  'BFloat16',
  'UInt',
  'NaN',
  'HLL12',
  'ULID',
  'JSON',
  'URL',
  'WKB',
  'WKT',
  'XXH3',
  'XXH64',
  'XXH32',
];

const TOKEN = new RegExp(`(${ACRONYMS.join('|')})|([A-Z]?[a-z]+)|([A-Z]+(?![a-z]))|(\\d+)|(_+)`, 'g');

/** The comparison key of a function name: lower case without underscores. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/_/g, '');
}

/** Snake-case a ClickHouse name the way Proton does. Names with underscores are only lower-cased. */
export function toSnakeCase(name: string): string {
  if (name.includes('_')) return name.toLowerCase();
  const words: string[] = [];
  for (const m of name.matchAll(TOKEN)) {
    const [text, , , , digits] = m;
    if (digits !== undefined && words.length > 0) {
      words[words.length - 1] += digits;
      continue;
    }
    words.push(text.toLowerCase());
  }
  return words.join('_');
}
