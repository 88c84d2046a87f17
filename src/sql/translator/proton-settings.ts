/**
 * Query settings that only mean something to Proton's streaming engine. The historical
 * translation drops them (the engine would reject them as unknown); the streaming planner reads
 * them from the AST.
 */
export const PROTON_QUERY_SETTINGS: ReadonlySet<string> = new Set([
  'seek_to',
  'query_mode',
  'checkpoint_interval',
  'checkpoint_settings',
  'recovery_policy',
  'enable_backfill_from_historical_store',
  'force_backfill_in_order',
  'emit_during_backfill',
  'replay_speed',
  'replay_time_column',
  'replay_start_time',
  'replay_end_time',
  'keep_versions',
  'join_quiesce_threshold_ms',
  'join_latency_threshold',
  'join_max_cached_bytes',
  'default_hash_table',
  'default_hash_join',
  'pause_on_start',
  'max_keep_windows',
  'max_windows',
  'enable_dependency_check',
  'include_internal_streams',
  'max_events',
  'memory_weight',
  'mv_preferred_exec_node',
  'enable_optimize_predicate_expression_to_final_subquery',
  'eps',
  'shards',
  'record_consume_batch_count',
]);

export function isProtonQuerySetting(name: string): boolean {
  return PROTON_QUERY_SETTINGS.has(name.toLowerCase());
}
