import { err } from '../errors/tributary-error.ts';

/**
 * MergeTree settings a CREATE STREAM may carry (`SETTINGS index_granularity_bytes = 0, ...`), as
 * Proton accepts its storage's MergeTree settings beside the stream settings. They tune how the
 * historical store of a hybrid stream (its MergeTree, stream-tables.ts) lays out, compresses and
 * merges its parts; none changes what a query answers. They are kept with the stream, printed by
 * SHOW CREATE and given to the MergeTree when it is created. A `streaming` or `memory` stream has
 * no MergeTree: there they are kept and printed only.
 *
 * Not accepted (UNKNOWN_SETTING, 115): MergeTree settings that limit or reshape inserts
 * (`parts_to_throw_insert`, `parts_to_delay_insert`, `max_parts_in_total`: Tributary moves rows
 * into the MergeTree itself and must not be refused or slowed there), that change which rows are
 * kept (`non_replicated_deduplication_window` would drop a moved block identical to an earlier
 * one), that limit reads (`max_partitions_to_read`) or that name disks and storage policies.
 */
const PASSED = [
  // Granules: rows (and bytes) per mark of the primary index.
  'index_granularity',
  'index_granularity_bytes',
  'min_index_granularity_bytes',
  'enable_mixed_granularity_parts',
  // Part format (compact or wide) and column serialization.
  'min_bytes_for_wide_part',
  'min_rows_for_wide_part',
  'ratio_of_defaults_for_sparse_serialization',
  // Compression blocks.
  'min_compress_block_size',
  'max_compress_block_size',
  // Merges: algorithm, block size, direct I/O, cleanup of merged parts, fsync.
  'enable_vertical_merge_algorithm',
  'vertical_merge_algorithm_min_rows_to_activate',
  'vertical_merge_algorithm_min_columns_to_activate',
  'merge_max_block_size',
  'min_merge_bytes_to_use_direct_io',
  'old_parts_lifetime',
  'remove_empty_parts',
  'fsync_after_insert',
  'fsync_part_directory',
  // Checks of the table's own keys (a Nullable sorting key, a floating-point partition key).
  'allow_nullable_key',
  'allow_floating_point_partition_key',
];

/** Obsolete MergeTree settings of older versions (the engine says "does nothing"): kept, not passed. */
const OBSOLETE = [
  'max_part_removal_threads',
  'min_rows_for_compact_part',
  'min_bytes_for_compact_part',
  'write_final_mark',
  'in_memory_parts_insert_sync',
];

const PASSED_SET: ReadonlySet<string> = new Set(PASSED);

/** Every MergeTree setting a stream accepts. */
export const STREAM_STORAGE_SETTINGS: ReadonlySet<string> = new Set([...PASSED, ...OBSOLETE]);

/** The value of a storage setting as the MergeTree takes it: a number (booleans as 0/1). */
export function storageSettingValue(name: string, value: string | number | boolean): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  const text = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(text)) return text;
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true' ? '1' : '0';
  throw err('BAD_ARGUMENTS', { detail: `Setting ${name} must be a non-negative number, got ${text}` });
}

/** `name = value` entries of the MergeTree's SETTINGS clause among a stream's kept settings. */
export function mergeTreeSettingEntries(settings: Readonly<Record<string, string>>): string[] {
  return Object.entries(settings)
    .filter(([k]) => PASSED_SET.has(k))
    .map(([k, v]) => `${k} = ${v}`);
}
