import type { SourceStatsBody } from '../sources/source-stats.ts';

/** SinkStats as the contract has it (fields this single-node server knows). */
export interface SinkStatsBody extends SourceStatsBody {
  status: string;
  status_ts: number;
  last_error_message: string;
  row_count: number;
  earliest_event: string;
  latest_event: string;
  lagging: number;
  historical_data_bytes: number;
  streaming_data_bytes: number;
  memory: number;
  leader_node: number;
  nodes: unknown[];
}

/**
 * A sink's stats: `success_count` rows the receiver acknowledged, `failure_count` rows of failed
 * attempts (a batch failing three times before it goes through counts three times), throughput in
 * bytes per second per minute within `metrics_time_range`, errors within `error_log_time_range`,
 * `lagging` rows its sources have committed that its query has not processed, `status` the status
 * of its underlying materialized view (`Suspended` while the sink is stopped; single node: leader 1).
 */
export function sinkStatsBody(
  base: SourceStatsBody,
  extra: {
    status: string;
    message: string;
    startedAt: number | undefined;
    lastWriteAt: number;
    lagging: number;
  },
): SinkStatsBody {
  const bytes = base.throughput.reduce((s, t) => s + t.value * 60, 0);
  return {
    ...base,
    status: extra.status,
    status_ts: extra.startedAt ?? 0,
    last_error_message: extra.message,
    row_count: base.success_count,
    earliest_event: extra.startedAt ? new Date(extra.startedAt).toISOString() : '',
    latest_event: extra.lastWriteAt ? new Date(extra.lastWriteAt).toISOString() : '',
    lagging: extra.lagging,
    historical_data_bytes: 0,
    streaming_data_bytes: Math.round(bytes),
    memory: 0,
    leader_node: 1,
    nodes: [],
  };
}
