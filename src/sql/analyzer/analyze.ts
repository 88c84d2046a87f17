import { isTributaryError } from '../../errors/tributary-error.ts';
import type { Expr, Identifier } from '../ast/expression.ts';
import type { FromItem, Query, SelectQuery } from '../ast/query.ts';
import type { Statement } from '../ast/statement.ts';
import { walk } from '../ast/walk.ts';
import { parseStatement } from '../parser/parse.ts';
import { print, printExpression } from '../printer/format.ts';
import { protonColumnName } from '../translator/column-names.ts';
import type { ResolvedTable, TableResolver } from '../translator/resolver.ts';
import { translate } from '../translator/translate.ts';
import { toProtonType } from '../types/proton-types.ts';
import { allSelects, fromSources, isAggregation, referencedColumns } from './query-facts.ts';
import { isStreamingQuery } from './streaming.ts';

/** A column of the analysis (spec: ColumnRef). Empty strings where a part is not known. */
export interface ColumnRef {
  database: string;
  table: string;
  column: string;
  column_type: string;
  is_view: boolean;
}

/** The Analysis shape of /v1beta2/sqlanalyze (platform-spec.md §2). */
export interface Analysis {
  group_by_columns: string[];
  has_aggr: boolean;
  has_subquery: boolean;
  has_table_join: boolean;
  has_union: boolean;
  is_streaming: boolean;
  original_query: string;
  query_type: string;
  required_columns: ColumnRef[];
  result_columns: ColumnRef[];
  rewritten_query: string;
}

export interface AnalyzeOptions {
  /** The database unqualified names resolve in (reported in ColumnRefs); default 'default'. */
  readonly defaultDatabase?: string;
  /** The statement `sql` parses to, when the caller has it (possibly rewritten, e.g. JavaScript aggregates). */
  readonly statement?: Statement;
}

/**
 * Analyze one statement against the catalogue. Throws SqlSyntaxError for text that does not
 * parse and catalogue errors for unknown streams. `rewritten_query` is the engine SQL when the
 * statement has a historical engine form, else the canonical Proton text. Result column types
 * of computed columns are empty here; fill them from the engine with `fillResultTypes`.
 */
export function analyze(sql: string, resolver: TableResolver, options: AnalyzeOptions = {}): Analysis {
  const statement = options.statement ?? parseStatement(sql);
  const defaultDb = options.defaultDatabase ?? 'default';
  const query = queryOf(statement);
  const base: Analysis = {
    group_by_columns: [],
    has_aggr: false,
    has_subquery: false,
    has_table_join: false,
    has_union: false,
    is_streaming: false,
    original_query: sql,
    query_type: queryType(statement),
    required_columns: [],
    result_columns: [],
    rewritten_query: rewrite(statement, resolver),
  };
  if (!query) return base;
  const selects = allSelects(query);
  const top = topSelects(query);
  const columns = new ColumnResolver(resolver, defaultDb);
  let hasSubquery = false;
  let hasJoin = false;
  walk(query, (n) => {
    if (n.kind === 'Subquery' || n.kind === 'SubqueryTable' || n.kind === 'Cte') hasSubquery = true;
    if (n.kind === 'Join') hasJoin = true;
    return undefined;
  });
  return {
    ...base,
    group_by_columns: top.flatMap((s) => s.groupBy?.items.map(printExpression) ?? []),
    has_aggr: selects.some(isAggregation),
    has_subquery: hasSubquery,
    has_table_join: hasJoin,
    has_union: selects.length > 0 && containsUnion(query),
    is_streaming: isStreamingQuery(query, resolver),
    required_columns: dedupe(selects.flatMap((s) => columns.required(s))),
    result_columns: top[0] ? columns.result(top[0]) : [],
  };
}

/** Fill `column_type` of result columns from the engine's description of `rewritten_query` (types converted to Proton names). */
export function fillResultTypes(
  analysis: Analysis,
  header: readonly { name: string; type: string }[],
): Analysis {
  const result_columns = analysis.result_columns.map((c, i) => {
    const h = header[i];
    if (c.column_type || !h) return c;
    let type = h.type;
    try {
      type = toProtonType(h.type);
    } catch {
      // keep the engine's spelling for types Proton has no name for
    }
    return { ...c, column_type: type };
  });
  return { ...analysis, result_columns };
}

function queryOf(s: Statement): Query | undefined {
  switch (s.kind) {
    case 'Select':
    case 'Union':
      return s;
    case 'Insert':
      return s.query;
    case 'CreateView':
      return s.query;
    case 'Subscribe':
      return s.query;
    case 'Explain':
      return queryOf(s.statement);
    default:
      return undefined;
  }
}

/** The statement's kind as Timeplus reports it: select, insert, create, drop, alter, ... */
export function queryType(s: Statement): string {
  switch (s.kind) {
    case 'Select':
    case 'Union':
      return 'select';
    case 'CreateStream':
    case 'CreateView':
    case 'CreateExternalTable':
    case 'CreateInput':
    case 'CreateDictionary':
    case 'CreateFormatSchema':
    case 'CreateFunction':
    case 'CreateDatabase':
      return 'create';
    case 'ShowCreate':
      return 'show';
    case 'KillQuery':
      return 'kill';
    default:
      return s.kind.toLowerCase();
  }
}

function rewrite(s: Statement, resolver: TableResolver): string {
  try {
    return translate(s, { resolver });
  } catch (e) {
    if (!isTributaryError(e) || e.errorName !== 'NOT_IMPLEMENTED') throw e;
    // Streaming-only forms (session windows, lag, ...) have no historical engine SQL.
    return print(s, { pretty: false });
  }
}

function topSelects(q: Query): SelectQuery[] {
  return q.kind === 'Union' ? q.queries.flatMap(topSelects) : [q];
}

function containsUnion(q: Query): boolean {
  let found = false;
  walk(q, (n) => {
    if (n.kind === 'Union') found = true;
  });
  return found;
}

function dedupe(refs: ColumnRef[]): ColumnRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.database}\u0000${r.table}\u0000${r.column}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

interface Source {
  alias: string;
  database: string;
  table: string;
  resolved?: ResolvedTable;
}

/** Resolves the columns of one SELECT level to the streams they come from. */
class ColumnResolver {
  constructor(
    private readonly resolver: TableResolver,
    private readonly defaultDb: string,
  ) {}

  private sources(select: SelectQuery): Source[] {
    const ctes = new Set(select.with?.filter((w) => w.kind === 'Cte').map((w) => w.name) ?? []);
    return fromSources(select.from).flatMap((item) => this.source(item, ctes));
  }

  private source(
    item: Exclude<FromItem, { kind: 'Join' | 'ArrayJoin' }>,
    ctes: ReadonlySet<string>,
  ): Source[] {
    const named = (database: string | undefined, name: string, alias: string): Source[] => {
      if (database === undefined && ctes.has(name)) return [];
      const r = this.resolver.resolve(database, name);
      return [
        {
          alias,
          database: r?.database ?? database ?? this.defaultDb,
          table: r?.name ?? name,
          ...(r ? { resolved: r } : {}),
        },
      ];
    };
    if (item.kind === 'Table') return named(item.database, item.name, item.alias ?? item.name);
    if (item.kind === 'TableFunction') {
      let arg = item.args[0];
      while (arg?.kind === 'Function' && arg.args[0]) arg = arg.args[0];
      if (arg?.kind === 'Identifier' && arg.parts.length <= 2) {
        const name = arg.parts[arg.parts.length - 1] as string;
        return named(arg.parts.length === 2 ? arg.parts[0] : undefined, name, item.alias ?? name);
      }
    }
    return [];
  }

  private ref(src: Source, column: string): ColumnRef {
    const col = src.resolved?.columns?.find((c) => c.name === column);
    return {
      database: src.database,
      table: src.table,
      column,
      column_type: col ? protonTypeOf(col.type) : '',
      is_view: src.resolved?.kind === 'view' || src.resolved?.kind === 'materialized_view',
    };
  }

  private lookup(sources: Source[], id: Identifier): ColumnRef | undefined {
    const column = id.parts[id.parts.length - 1] as string;
    if (id.parts.length > 1) {
      const qualifier = id.parts[id.parts.length - 2];
      const src = sources.find((s) => s.alias === qualifier || s.table === qualifier);
      return src ? this.ref(src, column) : undefined;
    }
    const owner =
      sources.find((s) => s.resolved?.columns?.some((c) => c.name === column)) ??
      (sources.length === 1 ? sources[0] : undefined);
    return owner ? this.ref(owner, column) : undefined;
  }

  required(select: SelectQuery): ColumnRef[] {
    const sources = this.sources(select);
    const out: ColumnRef[] = [];
    for (const id of referencedColumns(select)) {
      const r = this.lookup(sources, id);
      if (r) out.push(r);
    }
    for (const c of select.columns)
      if (c.kind === 'Asterisk') out.push(...this.star(sources, c.qualifier, c.except));
    return out;
  }

  private star(
    sources: Source[],
    qualifier: readonly string[] | undefined,
    except: readonly string[] | undefined,
  ): ColumnRef[] {
    const q = qualifier?.[qualifier.length - 1];
    return sources
      .filter((s) => q === undefined || s.alias === q || s.table === q)
      .flatMap((s) =>
        (s.resolved?.columns ?? []).filter((c) => !except?.includes(c.name)).map((c) => this.ref(s, c.name)),
      );
  }

  result(select: SelectQuery): ColumnRef[] {
    const sources = this.sources(select);
    return select.columns.flatMap((c): ColumnRef[] => {
      if (c.kind === 'Asterisk') return this.star(sources, c.qualifier, c.except);
      const inner: Expr = c.kind === 'Alias' ? c.expr : c;
      const name =
        c.kind === 'Alias'
          ? c.alias
          : c.kind === 'Identifier'
            ? (c.parts[c.parts.length - 1] as string)
            : protonColumnName(c);
      if (inner.kind === 'Identifier') {
        const r = this.lookup(sources, inner);
        if (r) return [{ ...r, column: name }];
      }
      return [{ database: '', table: '', column: name, column_type: '', is_view: false }];
    });
  }
}

function protonTypeOf(type: string): string {
  try {
    return toProtonType(type);
  } catch {
    return type;
  }
}
