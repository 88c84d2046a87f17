import type { Engine } from '../engine/engine.ts';
import { toProtonType } from '../sql/types/proton-types.ts';
import type { Plan, PlanOptions, QueryPlanner } from './execution.ts';
import { HistoricalExecution } from './historical-execution.ts';
import type { QueryAnalysis } from './query-types.ts';

const RESULT_STATEMENT = /^\s*(?:\(\s*)*(?:select|with|show|describe|desc|explain|exists)\b/i;

function analysisOf(sql: string, queryType: string): QueryAnalysis {
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

/**
 * Interim planner: runs engine (ClickHouse) SQL as given, every SELECT historically. It lets the
 * query routes be exercised before the Proton dialect planner is wired in; it is replaced by it.
 */
export class EngineSqlPlanner implements QueryPlanner {
  constructor(private readonly engine: Engine) {}

  async plan(sql: string, options: PlanOptions): Promise<Plan> {
    if (RESULT_STATEMENT.test(sql)) {
      const described = await this.engine.query(`DESCRIBE (${sql.replace(/[\s;]+$/, '')})`, {
        format: 'JSONCompactEachRow',
        lane: 'user',
      });
      const header = described
        .text()
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [name, type] = JSON.parse(line) as [string, string];
          return { name, type: toProtonType(type) };
        });
      return new HistoricalExecution(this.engine, sql, header, analysisOf(sql, 'select'), options.timeoutMs);
    }
    return {
      kind: 'statement',
      analysis: analysisOf(sql, 'statement'),
      run: async (signal) => {
        await this.engine.query(sql, { signal, lane: 'user' });
      },
    };
  }
}
