/**
 * Proton's own query settings (those of Proton's Settings.h that the engine does not know), each
 * with what it does here. The historical translation drops them from the SQL sent to the engine
 * (which would reject them as unknown); the parts that apply one read it from the AST. Every one
 * is accepted: none answers "Unknown setting". docs/sql-reference.md lists them (a test compares).
 */
export type ProtonSettingEffect =
  /** Tributary applies it with Proton's meaning. */
  | 'applied'
  /** It tunes a part of Proton that Tributary does not have (or does another way): accepted, ignored. */
  | 'no effect';

export interface ProtonSetting {
  readonly effect: ProtonSettingEffect;
  /** What it does here, in a phrase (docs/sql-reference.md shows it). */
  readonly note: string;
}

const applied = (note: string): ProtonSetting => ({ effect: 'applied', note });
const none = (note: string): ProtonSetting => ({ effect: 'no effect', note });

const INTERNAL = 'Proton-internal';
const KAFKA = 'Kafka external streams (not built)';

export const PROTON_SETTINGS: ReadonlyMap<string, ProtonSetting> = new Map<string, ProtonSetting>([
  // Streaming queries.
  [
    'seek_to',
    applied("start position of a streaming query ('earliest', 'latest', a sequence number, a time, '-1h')"),
  ],
  ['query_mode', applied("'table' makes the whole query historical")],
  [
    'keep_versions',
    applied(
      'versions per key an ASOF join keeps (default 3): per join key (against a versioned_kv stream its history included; against an append stream since the query started; also for an aligned LATEST join)',
    ),
  ],
  ['enable_backfill_from_historical_store', none("a backfill always reads the stream's one store")],
  [
    'force_backfill_in_order',
    none('a backfill reads in sequence order; windows are decided by the watermark either way'),
  ],
  [
    'emit_during_backfill',
    none('windows a backfill closes are emitted when it ends, as with the default false'),
  ],
  ['replay_speed', none('not applied yet: a rewound query reads its history at full speed')],
  ['replay_time_column', none('not applied yet (see replay_speed)')],
  ['replay_start_time', none('not applied yet (see replay_speed)')],
  ['replay_end_time', none('not applied yet (see replay_speed)')],
  ['max_events', applied('rows a read of a random stream generates; the query ends after them')],
  ['max_windows', none("Proton's cap on open windows; state here is bounded by the watermark")],
  ['max_keep_windows', none("Proton's cap on kept windows")],
  ['keep_windows', none("Proton's cap on kept windows")],
  [
    'asterisk_include_reserved_columns',
    applied('false: `*` leaves out the `_tp_*` columns (default true: `*` includes `_tp_time`)'),
  ],
  ['retract_max', none("Proton's bound on retractions per group")],
  ['retract_k_multiplier', none("Proton's over-allocation of retractable top-k state")],
  ['unnest_subqueries', none('subqueries run as nested steps here')],
  // Joins.
  [
    'join_max_buffered_bytes',
    none('buffered join state lives in engine tables, bounded by date_diff_within'),
  ],
  ['join_buffered_data_block_size', none(INTERNAL)],
  ['join_latency_threshold', none(INTERNAL)],
  [
    'join_quiesce_threshold_ms',
    applied(
      'milliseconds the right side of a join aligned by `lag_behind` may be quiet before the left rows waiting for it are joined with it as it is (unset: they wait however long it is quiet)',
    ),
  ],
  ['join_max_cached_bytes', none(INTERNAL)],
  ['max_join_range', none('the range of a date_diff_within join is what the query says')],
  ['default_hash_table', none(INTERNAL)],
  ['default_hash_join', none(INTERNAL)],
  // Checkpoints, materialized views and subscriptions.
  ['checkpoint_interval', applied('seconds between checkpoints of a materialized view or SUBSCRIBE query')],
  ['checkpoint_settings', none('checkpoints here are always local files and engine tables')],
  ['recovery_policy', none('recovery always resumes from the last checkpoint')],
  ['recovery_retry_for_sn_failure', none(INTERNAL)],
  ['pause_on_start', applied('a materialized view created paused')],
  ['mv_preferred_exec_node', none('one node')],
  ['enable_dependency_check', none('dependencies are always checked')],
  ['memory_weight', none(INTERNAL)],
  ['max_streaming_view_cached_block_bytes', none(INTERNAL)],
  ['max_streaming_view_cached_block_count', none(INTERNAL)],
  // Streams, ingest and DDL.
  ['shards', none('as a query setting; on CREATE STREAM it spreads inserts over shards (see "Streams")')],
  ['eps', none("a random stream's rate is its own eps setting (CREATE RANDOM STREAM ... SETTINGS eps)")],
  ['enforce_append_only', none('stream modes decide it')],
  ['compact_kv_stream', none('table() over kv streams is compacted at read')],
  ['enable_light_ingest', none(INTERNAL)],
  ['async_ingest_block_timeout_ms', none('ingest commits in groups on its own schedule')],
  ['aysnc_ingest_max_outstanding_blocks', none(INTERNAL)],
  ['max_idempotent_ids', none('the idempotency window is fixed')],
  ['part_commit_pool_size', none(INTERNAL)],
  ['rawstore_time_extraction_type', none(INTERNAL)],
  ['rawstore_time_extraction_rule', none(INTERNAL)],
  ['force_drop_big_stream', none('any stream may be dropped')],
  ['synchronous_ddl', none('DDL is synchronous')],
  ['log_insert_query', none(INTERNAL)],
  ['include_internal_streams', none('SHOW STREAMS lists user streams')],
  ['is_internal', none(INTERNAL)],
  ['_tp_enable_log_stream_expr', none(INTERNAL)],
  ['_tp_internal_system_open_sesame', none(INTERNAL)],
  ['record_consume_batch_count', none(INTERNAL)],
  ['record_consume_timeout_ms', none(INTERNAL)],
  ['fetch_buffer_size', none(INTERNAL)],
  // Functions.
  ['javascript_max_memory_bytes', none('user-defined functions are not built yet')],
  ['javascript_uda_max_concurrency', none('user-defined functions are not built yet')],
  ['max_number_of_parameters_for_json_values', none(INTERNAL)],
  // Server and resources.
  ['exec_mode', none(INTERNAL)],
  ['enable_query_pipe', none(INTERNAL)],
  ['query_resource_group', none('no resource groups')],
  ['max_channels_per_resource_group', none('no resource groups')],
  ['min_threads', none(INTERNAL)],
  ['max_backup_threads', none(INTERNAL)],
  ['max_query_cache_size', none(INTERNAL)],
  ['send_progress_in_http_body', none("progress goes to the query's metrics events")],
  ['sleep_in_receive_cancel_ms', none(INTERNAL)],
  ['enable_filesystem_cache_on_lower_level', none(INTERNAL)],
  ['experimental_query_deduplication_send_all_part_uuids', none(INTERNAL)],
  // Kafka.
  ['kafka_client_queued_max_bytes', none(KAFKA)],
  ['kafka_client_queued_min_message', none(KAFKA)],
  ['kafka_fetch_max_bytes', none(KAFKA)],
  ['kafka_fetch_wait_max_ms', none(KAFKA)],
  ['kafka_max_message_size', none(KAFKA)],
  ['kafka_schema_registry_ca_location', none(KAFKA)],
  ['kafka_schema_registry_cert_file', none(KAFKA)],
  ['kafka_schema_registry_credentials', none(KAFKA)],
  ['kafka_schema_registry_private_key_file', none(KAFKA)],
  ['kafka_schema_registry_skip_cert_check', none(KAFKA)],
  ['kafka_schema_registry_url', none(KAFKA)],
]);

/** The names of Proton's own query settings. */
export const PROTON_QUERY_SETTINGS: ReadonlySet<string> = new Set(PROTON_SETTINGS.keys());

export function isProtonQuerySetting(name: string): boolean {
  return PROTON_SETTINGS.has(name.toLowerCase());
}
