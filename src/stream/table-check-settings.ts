import { storageSettingValue } from './merge-tree-settings.ts';

/**
 * Engine checks of a table's own declaration that a stream may switch off, as a CREATE TABLE may:
 * `CREATE STREAM s (x low_cardinality(uint64)) SETTINGS allow_suspicious_low_cardinality_types = 1`,
 * or a `SET` of it earlier in the same request (session-settings.ts). Each only lets a declaration
 * through that the engine would call unwise (a LowCardinality of a small number, a long
 * FixedString, a meaningless codec, an index repeating the key, a TTL reading no column, similar
 * Variant types); none opens any access (query-setting-policy.ts admits the same ones to queries).
 *
 * The engine checks them when a table is created, not when it is attached at start, so the stream
 * keeps them (printed by SHOW CREATE) and every CREATE TABLE of its tables carries them in its
 * SETTINGS clause, where the engine takes them as settings of that statement: the MergeTree, the
 * front and Merge tables (created again by ALTER STREAM), the Memory table of a memory stream and
 * the scratch table WAL recovery replays through, the staging table of a large ingest request
 * (stage-area.ts) and the scratch table of an INSERT ... VALUES; so does ALTER STREAM's ADD and
 * MODIFY COLUMN.
 */
export const STREAM_TYPE_CHECKS: ReadonlySet<string> = new Set([
  'allow_suspicious_low_cardinality_types',
  'allow_suspicious_fixed_string_types',
  'allow_suspicious_codecs',
  'allow_suspicious_indices',
  'allow_suspicious_ttl_expressions',
  'allow_suspicious_variant_types',
]);

/** The value a stream keeps for a type check: 0 or 1. */
export function typeCheckValue(name: string, value: string | number | boolean): string {
  return storageSettingValue(name, value) === '0' ? '0' : '1';
}

/** `name = 1` for each check the stream switches off. */
export function typeCheckEntries(settings: Readonly<Record<string, string>>): string[] {
  return Object.entries(settings)
    .filter(([k, v]) => STREAM_TYPE_CHECKS.has(k) && v !== '0')
    .map(([k]) => `${k} = 1`);
}

/**
 * A CREATE TABLE or ALTER TABLE without a SETTINGS clause of its own, with the stream's
 * switched-off checks as its SETTINGS clause (settings of that statement to the engine).
 */
export function withTypeChecks(statement: string, settings: Readonly<Record<string, string>>): string {
  const entries = typeCheckEntries(settings);
  return entries.length === 0 ? statement : `${statement}\nSETTINGS ${entries.join(', ')}`;
}
