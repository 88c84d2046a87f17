import type { ExecutionProgress, PipelineStep, ResultSink } from '../streaming/result-sink.ts';
import type { RowsPlan } from './execution.ts';
import type { QueryAnalysis, ResultColumn } from './query-types.ts';

function emptyAnalysis(sql: string, queryType: string): QueryAnalysis {
  return {
    group_by_columns: [],
    has_aggr: false,
    has_subquery: false,
    has_table_join: false,
    has_union: false,
    is_streaming: false,
    original_query: sql,
    query_type: queryType,
    required_columns: [],
    result_columns: [],
    rewritten_query: sql,
  };
}

/** A bounded result computed by Tributary itself (SHOW STREAMS, SHOW CREATE, DESCRIBE, ...). */
export class StaticRows implements RowsPlan {
  readonly kind = 'rows';
  readonly streaming = false;
  readonly analysis: QueryAnalysis;

  constructor(
    readonly header: ResultColumn[],
    private readonly rows: readonly unknown[][],
    sql: string,
    queryType: string,
  ) {
    this.analysis = emptyAnalysis(sql, queryType);
  }

  async run(sink: ResultSink): Promise<void> {
    if (this.rows.length) await sink.rows(this.rows.map((r) => JSON.stringify(r)));
  }

  progress(): ExecutionProgress {
    return { scannedRows: this.rows.length, scannedBytes: 0, lastEventTime: 0 };
  }

  pipeline(): PipelineStep[] {
    return [
      { id: 0, name: 'Values', status: 'finished', processedBytes: 0, processingTimeNs: 0, inputs: [] },
    ];
  }
}

/** A statement plan whose work is `run`. */
export function statementPlan(sql: string, queryType: string, run: (signal: AbortSignal) => Promise<void>) {
  return { kind: 'statement' as const, analysis: emptyAnalysis(sql, queryType), run };
}

/** The answer of a SHOW that lists names (streams, views, databases): one `name` column, in order. */
export function nameRows(names: readonly string[], sql: string): StaticRows {
  return new StaticRows(
    [{ name: 'name', type: 'string' }],
    names.map((n) => [n]),
    sql,
    'show',
  );
}
