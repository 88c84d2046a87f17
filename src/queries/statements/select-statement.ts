import type { Engine } from '../../engine/engine.ts';
import { guardedEngine } from '../../engine/guarded-engine.ts';
import { err } from '../../errors/tributary-error.ts';
import { analyze, fillResultTypes } from '../../sql/analyzer/analyze.ts';
import { checkJoinOnInequalities } from '../../sql/analyzer/join-on-inequality.ts';
import { isStreamingQuery } from '../../sql/analyzer/streaming.ts';
import type { Query, SelectQuery, UnionQuery } from '../../sql/ast/query.ts';
import { recordingResolver, type TableResolver } from '../../sql/translator/resolver.ts';
import { translate, translateQuery } from '../../sql/translator/translate.ts';
import { toProtonType } from '../../sql/types/proton-types.ts';
import { checkWindowEventTime } from '../../streaming/event-time-check.ts';
import type { CommittedRanges } from '../../streaming/source-cursor.ts';
import type { BindingContext } from '../../streaming/stream-bindings.ts';
import { StreamingExecution } from '../../streaming/streaming-execution.ts';
import { planStreamingQuery } from '../../streaming/streaming-planner.ts';
import { StreamingUnion } from '../../streaming/streaming-union.ts';
import { checkWindowTime, windowFunctionsIn, windowTimeColumn } from '../../streaming/window-time-check.ts';
import type { Plan } from '../execution.ts';
import { HistoricalExecution } from '../historical-execution.ts';
import { HISTORICAL_ENGINE_SETTINGS } from '../historical-settings.ts';
import type { QueryAnalysis, ResultColumn } from '../query-types.ts';
import type { StatementContext, StatementHandler } from '../statement-handler.ts';

export interface SelectDeps extends BindingContext {
  readonly engine: Engine;
  readonly resolver: TableResolver;
  readonly ranges: CommittedRanges;
  /** Rewrites the query before planning (JavaScript aggregates, src/udf/aggregate-udf-rewrite.ts). */
  readonly rewrite?: (query: Query, streaming: boolean) => Query;
}

/** The result columns of engine SQL, in Proton type names (DESCRIBE, without running it). */
export async function describeEngineSql(engine: Engine, sql: string): Promise<ResultColumn[]> {
  const r = await engine.query(`DESCRIBE (${sql})`, {
    format: 'JSONCompactEachRow',
    settings: HISTORICAL_ENGINE_SETTINGS,
    lane: 'user',
    userSql: true,
  });
  return r
    .text()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, type] = JSON.parse(line) as [string, string];
      let proton = type;
      try {
        proton = toProtonType(type);
      } catch {
        // a type Proton has no name for keeps the engine's spelling
      }
      return { name, type: proton };
    });
}

/**
 * SELECT / UNION: historical when it reads no stream incrementally (only `table(...)`, views over
 * table(), engine tables) or when the client asked for `type: historical`; streaming otherwise.
 */
export function selectHandler(deps: SelectDeps): StatementHandler<Query> {
  return async (written, ctx: StatementContext): Promise<Plan> => {
    const { options, sql } = ctx;
    const streaming =
      options.type === 'historical'
        ? false
        : options.type === 'streaming' || isStreamingQuery(written, deps.resolver);
    const query = deps.rewrite ? deps.rewrite(written, streaming) : written;
    const analysis: QueryAnalysis = analyze(
      sql,
      deps.resolver,
      query !== written ? { statement: query } : {},
    );
    // The streams the query reads, as translation resolves them; every engine statement of the
    // query holds their flush locks.
    const reads = new Set<string>();
    const resolver = recordingResolver(deps.resolver, reads);
    const engine = guardedEngine(deps.engine, (work) => deps.ranges.read([...reads], work));
    checkWindowEventTime(query, deps.resolver);
    if (!streaming) {
      checkJoinOnInequalities(query, deps.resolver);
      if (query.kind === 'Select') {
        for (const w of windowFunctionsIn(query)) {
          await checkWindowTime(engine, w, windowTimeColumn(w), query.with, (q) =>
            translateQuery(q, { resolver }),
          );
        }
      }
      const engineSql = translate(query, { resolver, protonResults: true });
      const header = await describeEngineSql(deps.engine, engineSql);
      return new HistoricalExecution(
        engine,
        engineSql,
        header,
        fillResultTypes(analysis, header),
        options.timeoutMs,
      );
    }
    const planBranch = async (q: Query) => {
      const program = await planStreamingQuery(q, {
        ...deps,
        resolver,
        engine,
        committedSn: (k) => deps.ranges.committedSn(k),
      });
      return new StreamingExecution(
        deps.engine,
        deps.ranges,
        program,
        { ...fillResultTypes(analysis, program.header), is_streaming: true },
        [...reads],
      );
    };
    if (query.kind !== 'Union') return planBranch(query);
    // A streaming UNION: each branch runs as its own streaming query (streaming-union.ts).
    const branches: StreamingExecution[] = [];
    try {
      for (const q of unionBranches(query)) branches.push(await planBranch(q));
    } catch (e) {
      for (const b of branches) await b.dispose();
      throw e;
    }
    const first = branches[0] as StreamingExecution;
    return new StreamingUnion(branches, { ...fillResultTypes(analysis, first.header), is_streaming: true });
  };
}

/** The SELECTs of a streaming UNION (nested unions flattened); UNION DISTINCT is refused. */
function unionBranches(u: UnionQuery): SelectQuery[] {
  if (u.ops.includes('UNION DISTINCT'))
    throw err('NOT_IMPLEMENTED', {
      detail: 'UNION DISTINCT of streaming queries is not supported; use UNION ALL',
    });
  return u.queries.flatMap((q) => (q.kind === 'Union' ? unionBranches(q) : [q]));
}
