import { distance } from 'fastest-levenshtein';
import { err } from '../../errors/tributary-error.ts';
import type {
  Asterisk,
  Expr,
  FunctionCall,
  IntervalExpr,
  JsonAccess,
  Setting,
  SubscriptExpr,
} from '../ast/expression.ts';
import type { FromItem, Query, SelectQuery, UnionQuery } from '../ast/query.ts';
import type { Span } from '../ast/span.ts';
import { NO_SPAN } from '../ast/span.ts';
import { mapFunctionCall } from '../names/function-calls.ts';
import {
  isStreamingTableFunction,
  resolveTableFunctionName,
  suggestFunctionName,
} from '../names/function-catalog.ts';
import { jsonSelectAll, jsonSelectOne, selectsMany, shortcutJsonPath } from '../names/json-functions.ts';
import { binaryPrec, PREC, precedenceOf } from '../printer/print-expression.ts';
import { StatementPrinter } from '../printer/print-statement.ts';
import { backtick, Layout, quoteIdentifier } from '../printer/sql-text.ts';
import { type DataType, printDataType, TypeSyntaxError } from '../types/data-type.ts';
import { PROTON_TYPE_NAMES, toClickHouseType, UnknownTypeError } from '../types/proton-types.ts';
import { asBool } from './bool-results.ts';
import { protonColumnName } from './column-names.ts';
import { isDictionaryFunction, withDictionaryName } from './dictionary-calls.ts';
import {
  checkEngineTable,
  checkFunction,
  checkQuerySetting,
  checkTableFunction,
} from './engine-allow-list.ts';
import { havingOverLag } from './having-over-lag.ts';
import { historicalStreamingCall } from './historical-streaming-functions.ts';
import { isArrayOrMap, type MapCastScope } from './map-cast.ts';
import { isProtonQuerySetting } from './proton-settings.ts';
import type { ResolvedTable, TableResolver } from './resolver.ts';
import { isTypeNameCall, protonTypeNameSql } from './type-name-call.ts';
import { dedupSql, hopSql, splitWindowArgs, tumbleSql, type WindowSql } from './window-sources.ts';

export interface TranslateOptions {
  readonly resolver: TableResolver;
  /**
   * Streaming-only functions (lag, emit_version, date_diff_within, earliest_ts, ...). The
   * streaming planner supplies their ClickHouse form; without a hook they raise NOT_IMPLEMENTED.
   */
  readonly streamingFunction?: (call: FunctionCall, translate: (e: Expr) => string) => string;
  /** Alias computed select items with their Proton column names (default true). */
  readonly protonColumnNames?: boolean;
  /**
   * Answer results as Proton does (default false; the historical path sets it): select items that
   * are conditions answer `bool` (bool-results.ts) and `to_type_name(x)` answers Proton's type
   * names (type-name-call.ts). Off for Tributary's own SQL, e.g. the streaming planner's
   * `CAST(x, to_type_name(y))`, which needs the engine's names.
   */
  readonly protonResults?: boolean;
  /**
   * Select items that are conditions answer `bool` (bool-results.ts), without the rest of
   * protonResults: the streaming planner sets it on the SQL of the steps whose rows reach the user
   * (tail, fold and emit), so streaming and historical results share one rule.
   */
  readonly boolResults?: boolean;
  /**
   * `dedup(s, keys...[, ttl][, limit])` in a streaming query: the planner keeps the keys seen
   * across steps and answers the FROM text (undefined: the historical form). Without a hook,
   * dedup keeps the first row per key of what it reads.
   */
  readonly streamingDedup?: (dedup: DedupCall) => string | undefined;
}

/** A dedup() call as the streaming planner needs it: source, translated keys, TTL and limit. */
export interface DedupCall {
  readonly source: { readonly sql: string; readonly star: string };
  readonly keys: readonly string[];
  /** The interval argument (keys expire this long after they were first seen), if given. */
  readonly ttl?: Expr;
  /** The trailing integer argument (at most this many keys are kept), if given. */
  readonly limit?: number;
}

/** Operator forms that get parentheses whenever they are an operand, so the engine's own precedence never matters. */
const OPERATORS = new Set(['Binary', 'Unary', 'Between', 'IsNull', 'Ternary', 'Lambda']);

/** Left-associative operators whose left-deep chains print flat (see flatChain). */
/** Proton's reserved columns, which `*` leaves out under `asterisk_include_reserved_columns = false`. */
const RESERVED_COLUMNS = [
  '_tp_time',
  '_tp_delta',
  '_tp_sn',
  '_tp_shard',
  '_tp_append_time',
  '_tp_index_time',
];

/** Whether the query's SETTINGS turn `asterisk_include_reserved_columns` off. */
function reservedColumnsHidden(settings: readonly Setting[] | undefined): boolean {
  const s = settings?.find((x) => x.name.toLowerCase() === 'asterisk_include_reserved_columns');
  const v = s?.value;
  if (v?.kind === 'Bool') return !v.value;
  if (v?.kind === 'Number') return Number(v.text) === 0;
  if (v?.kind === 'String') return v.value === '0' || v.value.toLowerCase() === 'false';
  return false;
}

const FLAT_CHAIN_OPS: ReadonlySet<string> = new Set(['OR', 'AND', '||', '+', '-', '*']);

/** Table functions whose first argument is a structure `name type, ...`. */
const STRUCTURE_FIRST: ReadonlySet<string> = new Set(['values', 'generateRandom']);

const CAST_FUNCTIONS = new Set([
  'CAST',
  '_CAST',
  'accurateCast',
  'accurateCastOrNull',
  'accurateCastOrDefault',
]);

/** Engine JSON functions whose last argument names the result type. */
const JSON_TYPE_LAST = new Set([
  'JSONExtract',
  'JSONExtractCaseInsensitive',
  'JSONExtractKeysAndValues',
  'JSONExtractKeysAndValuesCaseInsensitive',
]);

/** A source of the current SELECT, as far as `*` expansion needs to know it. */
interface Source {
  readonly alias: string;
  readonly hidden: readonly string[];
  /** Column types by name, when the catalogue knows them. */
  readonly columns?: ReadonlyMap<string, string>;
}

function columnTypes(r: ResolvedTable | undefined): { columns?: ReadonlyMap<string, string> } {
  return r?.columns ? { columns: new Map(r.columns.map((c) => [c.name, c.type])) } : {};
}

/**
 * Prints Proton AST as ClickHouse SQL with historical semantics (see translate.ts). One instance
 * per translation: it keeps the CTE scope and the sources of the SELECT being printed.
 */
export class ClickHousePrinter extends StatementPrinter {
  private readonly cteScopes: Set<string>[] = [];
  private readonly sourceScopes: Source[][] = [];
  /** Select aliases of the SELECTs being printed, innermost last. */
  private readonly aliasScopes: Map<string, Expr>[] = [];
  /** SETTINGS asterisk_include_reserved_columns = false on the query: `*` leaves out `_tp_*` columns. */
  private hideReserved: boolean | undefined;
  private viewDepth = 0;

  constructor(private readonly options: TranslateOptions) {
    super();
  }

  // --- expressions ---

  override expr(e: Expr, min: number = PREC.lambda, layout: Layout = new Layout(false)): string {
    const text = this.exprText(e, layout);
    if (min > PREC.lambda && OPERATORS.has(e.kind)) return `(${text})`;
    return precedenceOf(e) < min ? `(${text})` : text;
  }

  protected override exprText(e: Expr, layout: Layout): string {
    switch (e.kind) {
      case 'Tuple':
        return e.elements.length === 1
          ? `tuple(${this.item(e.elements[0] as Expr, layout)})`
          : super.exprText(e, layout);
      case 'Map':
        return `map(${e.entries.map((x) => `${this.expr(x.key, PREC.lambda, layout)}, ${this.expr(x.value, PREC.lambda, layout)}`).join(', ')})`;
      case 'Range':
        throw err('BAD_ARGUMENTS', {
          detail: 'A range such as [a, b) is only valid as the start/end condition of session()',
        });
      case 'Cast':
        return `CAST(${this.expr(e.expr, PREC.lambda, layout)} AS ${this.dataType(e.type)})`;
      case 'Binary':
        return FLAT_CHAIN_OPS.has(e.op) ? this.flatChain(e, layout) : super.exprText(e, layout);
      default:
        return super.exprText(e, layout);
    }
  }

  /**
   * A left-deep chain `a OR b OR c` as `(a) OR (b) OR (c)`, not `((a) OR (b)) OR (c)`: the engine
   * reads the flat form as one n-ary or()/and() (and the same left-associative +, -, ||), while
   * every nested parenthesis costs it parser depth (max_parser_depth 1000 is reached by ~200
   * parenthesised OR terms). Operands stay parenthesised, so precedence never matters.
   */
  private flatChain(e: Expr & { kind: 'Binary' }, layout: Layout): string {
    const p = binaryPrec(e.op);
    const tail: string[] = [];
    let node: Expr = e;
    while (node.kind === 'Binary' && FLAT_CHAIN_OPS.has(node.op) && binaryPrec(node.op) === p) {
      tail.push(`${node.op} ${this.expr(node.right, p + 1, layout)}`);
      node = node.left;
    }
    return [this.expr(node, p + 1, layout), ...tail.reverse()].join(' ');
  }

  override dataType(t: DataType): string {
    try {
      return toClickHouseType(printDataType(t));
    } catch (e) {
      if (e instanceof UnknownTypeError) throw unknownType(e.typeName);
      throw e;
    }
  }

  protected override interval(e: IntervalExpr, layout: Layout): string {
    return `INTERVAL ${this.expr(e.value, PREC.unary, layout)} ${e.unit}`;
  }

  /** `raw[*]`: every element of the JSON array in `raw` (Proton's shortcut), else a subscript. */
  protected override subscript(e: SubscriptExpr, layout: Layout): string {
    if (e.index.kind !== 'Asterisk' || e.index.qualifier) return super.subscript(e, layout);
    return this.expr(jsonSelectAll(e.object, '$[*]', e), PREC.lambda, layout);
  }

  /** `raw:a.b` is json_value(raw, '$.a.b'); `raw:a[*]` every element of the array (json-functions.ts). */
  protected override jsonAccess(e: JsonAccess, layout: Layout): string {
    const path = shortcutJsonPath(e.path);
    const call = selectsMany(path) ? jsonSelectAll(e.object, path, e) : jsonSelectOne(e.object, path, e);
    return this.expr(call, PREC.lambda, layout);
  }

  protected override functionCall(f: FunctionCall, layout: Layout): string {
    if (this.options.protonResults && isTypeNameCall(f.name, f.args.length) && !f.over) {
      return protonTypeNameSql(this.expr(f.args[0] as Expr, PREC.lambda, layout));
    }
    const resolveFunction = this.options.resolver.resolveFunction?.bind(this.options.resolver);
    const m = mapFunctionCall(f, resolveFunction);
    if (m.kind === 'streaming') {
      if (this.options.streamingFunction)
        return this.options.streamingFunction(f, (e) => this.expr(e, PREC.lambda, layout));
      const historical = historicalStreamingCall(f);
      if (historical) return this.expr(historical, PREC.lambda, layout);
      throw err('NOT_IMPLEMENTED', { detail: `Function ${f.name} is only supported in streaming queries` });
    }
    if (m.kind === 'unsupported') {
      throw err('NOT_IMPLEMENTED', {
        detail: `Function ${m.name} (at position ${f.span.start + 1}) is not supported: ${m.reason}`,
      });
    }
    if (m.kind === 'unknown') {
      throw err('UNKNOWN_FUNCTION', {
        name: m.name,
        hint: m.suggestion ? `. Maybe you meant: ${m.suggestion}` : '',
      });
    }
    let call = m.call;
    if (isDictionaryFunction(call.name)) call = withDictionaryName(call, f, this.options.resolver);
    else checkFunction(call.name, f.name, f.span);
    if (
      f.name.toLowerCase() === 'map_cast' &&
      f.args.length === 2 &&
      isArrayOrMap(f.args[0] as Expr, this.mapCastScope)
    ) {
      call = { ...call, name: 'mapFromArrays' };
    }
    // json_extract(json, [keys...,] 'type'): the type in Proton's spelling, as in casts.
    const last = call.args.at(-1);
    if (JSON_TYPE_LAST.has(call.name) && call.args.length >= 2 && last?.kind === 'String') {
      call = { ...call, args: [...call.args.slice(0, -1), { ...last, value: this.typeString(last.value) }] };
    }
    if (CAST_FUNCTIONS.has(call.name) && call.args[1]?.kind === 'String') {
      const typeArg = call.args[1];
      const type = this.typeString(typeArg.value);
      call = { ...call, args: [call.args[0] as Expr, { ...typeArg, value: type }, ...call.args.slice(2)] };
    }
    return super.functionCall(call, layout);
  }

  private typeString(text: string): string {
    try {
      return toClickHouseType(text);
    } catch (e) {
      if (e instanceof UnknownTypeError) throw unknownType(e.typeName);
      if (e instanceof TypeSyntaxError) return text;
      throw e;
    }
  }

  /** What map_cast's argument check sees of the SELECTs being printed. */
  private readonly mapCastScope: MapCastScope = {
    aliasTarget: (name) => this.aliasTarget(name),
    columnType: (parts) => this.columnType(parts),
  };

  /** The expression a select alias names, innermost SELECT first. */
  private aliasTarget(name: string): Expr | undefined {
    for (let i = this.aliasScopes.length - 1; i >= 0; i--) {
      const e = this.aliasScopes[i]?.get(name);
      if (e) return e;
    }
    return undefined;
  }

  /** The type of `[source.]column` among the current SELECT's sources, when known. */
  private columnType(parts: readonly string[]): string | undefined {
    const sources = this.sourceScopes[this.sourceScopes.length - 1] ?? [];
    const column = parts[parts.length - 1] as string;
    const qualifier = parts.length > 1 ? parts[parts.length - 2] : undefined;
    for (const s of sources) {
      if (qualifier !== undefined && s.alias !== qualifier) continue;
      const type = s.columns?.get(column);
      if (type) return type;
    }
    return undefined;
  }

  /** `*` of a source with hidden storage columns (e.g. `_tp_sn`) becomes `* EXCEPT (...)`. */
  private asterisk(a: Asterisk): string {
    const sources = this.sourceScopes[this.sourceScopes.length - 1] ?? [];
    const except = (hidden: readonly string[]) => {
      const all = [
        ...new Set([...hidden, ...(a.except ?? []), ...(this.hideReserved ? RESERVED_COLUMNS : [])]),
      ];
      return all.length
        ? ` EXCEPT (${all.map((n) => n.split('.').map(quoteIdentifier).join('.')).join(', ')})`
        : '';
    };
    if (a.qualifier) {
      const q = a.qualifier.join('.');
      const src = sources.find((s) => s.alias === q || s.alias === a.qualifier?.[a.qualifier.length - 1]);
      return `${a.qualifier.map(quoteIdentifier).join('.')}.*${except(src?.hidden ?? [])}`;
    }
    if (sources.length <= 1) return `*${except(sources[0]?.hidden ?? [])}`;
    if (!sources.some((s) => s.hidden.length)) return `*${except([])}`;
    return sources.map((s) => `${quoteIdentifier(s.alias)}.*${except(s.hidden)}`).join(', ');
  }

  // --- queries ---

  /** A bare UNION is UNION ALL in Proton (its `union_default_mode` is ALL; the engine's is unset). */
  protected override union(u: UnionQuery, layout: Layout): string {
    const { format: _f, ...rest } = u;
    const ops = rest.ops.map((op) => (op === 'UNION' ? 'UNION ALL' : op));
    return super.union({ ...rest, ops }, layout);
  }

  protected override select(q: SelectQuery, layout: Layout): string {
    const filtered = havingOverLag(q);
    if (filtered !== q) return this.select(filtered, layout);
    // A stream is read through a Merge table, which refuses PREWHERE (182): the same filter as a
    // WHERE conjunct selects the same rows (PREWHERE only orders the reading of columns).
    if (q.prewhere) {
      const { prewhere, ...rest } = q;
      const where: Expr = q.where
        ? { kind: 'Binary', op: 'AND', left: prewhere, right: q.where, span: NO_SPAN }
        : prewhere;
      return this.select({ ...rest, where }, layout);
    }
    const ctes = new Set(q.with?.filter((w) => w.kind === 'Cte').map((w) => w.name) ?? []);
    this.cteScopes.push(ctes);
    this.sourceScopes.push(q.from ? this.sourcesOf(q.from) : []);
    const aliases = new Map<string, Expr>();
    for (const c of q.columns) if (c.kind === 'Alias') aliases.set(c.alias, c.expr);
    this.aliasScopes.push(aliases);
    const outermost = this.hideReserved === undefined;
    if (outermost) this.hideReserved = reservedColumnsHidden(q.settings);
    try {
      const settings = q.settings?.filter((s) => !isProtonQuerySetting(s.name));
      for (const s of settings ?? []) checkQuerySetting(s);
      // FORMAT is the caller's business (the engine call takes the output format as an option).
      const { emit: _e, partitionBy: _p, shuffleBy: _s, settings: _x, format: _f, ...rest } = q;
      const historical: SelectQuery = { ...rest, ...(settings?.length ? { settings } : {}) };
      return super.select(historical, layout);
    } finally {
      if (outermost) this.hideReserved = undefined;
      this.cteScopes.pop();
      this.sourceScopes.pop();
      this.aliasScopes.pop();
    }
  }

  /** Computed select items get their Proton column name as alias (`toString(x) AS \`to_string(x)\``). */
  protected override selectList(q: SelectQuery, layout: Layout): string {
    if (this.options.protonColumnNames === false) {
      return q.columns
        .map((c) => (c.kind === 'Asterisk' ? this.asterisk(c) : this.item(this.boolItem(c), layout)))
        .join(', ');
    }
    const used = new Map<string, string>();
    return q.columns
      .map((c) => {
        if (c.kind === 'Asterisk') return this.asterisk(c);
        const text = this.item(this.boolItem(c), layout);
        if (c.kind === 'Alias' || c.kind === 'Identifier' || c.kind === 'Columns') return text;
        const name = protonColumnName(c);
        const previous = used.get(name);
        // The engine renames `f(DISTINCT x)` (`countDistinct(x)`): alias it even when the text is the name.
        const renamed = /\bDISTINCT\b/i.test(text);
        if ((name === text && !renamed) || (previous !== undefined && previous !== text)) return text;
        used.set(name, text);
        return `${text} AS ${backtick(name)}`;
      })
      .join(', ');
  }

  /** A condition select item as `to_bool(...)` (same name) when Proton's bool results are asked for. */
  private boolItem(c: Expr): Expr {
    if (!this.options.protonResults && !this.options.boolResults) return c;
    if (c.kind === 'Alias') return { ...c, expr: asBool(c.expr) };
    return asBool(c);
  }

  private inCte(name: string): boolean {
    return this.cteScopes.some((s) => s.has(name));
  }

  private resolve(database: string | undefined, name: string): ResolvedTable {
    const r = this.options.resolver.resolve(database, name);
    if (!r) throw err('UNKNOWN_STREAM', { name: database !== undefined ? `${database}.${name}` : name });
    return r;
  }

  /** The sources a SELECT reads, with the storage columns `*` must not show. */
  private sourcesOf(item: FromItem): Source[] {
    switch (item.kind) {
      case 'Join':
        return [...this.sourcesOf(item.left), ...this.sourcesOf(item.right)];
      case 'ArrayJoin':
        return this.sourcesOf(item.left);
      case 'Table': {
        const alias = item.alias ?? item.name;
        if (item.database === undefined && this.inCte(item.name)) return [{ alias, hidden: [] }];
        const r = this.options.resolver.resolve(item.database, item.name);
        return [{ alias, hidden: r?.kind === 'view' ? [] : (r?.hiddenColumns ?? []), ...columnTypes(r) }];
      }
      case 'TableFunction': {
        const alias = item.alias ?? this.defaultAlias(item.args[0]) ?? item.name;
        const [arg] = item.args;
        if (
          item.name.toLowerCase() === 'table' &&
          item.args.length === 1 &&
          arg?.kind === 'Identifier' &&
          arg.parts.length <= 2
        ) {
          const [db, name] =
            arg.parts.length === 2
              ? [arg.parts[0], arg.parts[1] as string]
              : [undefined, arg.parts[0] as string];
          if (db === undefined && this.inCte(name)) return [{ alias, hidden: [] }];
          const r = this.options.resolver.resolve(db, name);
          return [{ alias, hidden: r?.kind === 'view' ? [] : (r?.hiddenColumns ?? []), ...columnTypes(r) }];
        }
        return [{ alias, hidden: [] }];
      }
      case 'SubqueryTable':
        return [{ alias: item.alias ?? '', hidden: [] }];
    }
  }

  private defaultAlias(source: Expr | undefined): string | undefined {
    if (!source) return undefined;
    if (source.kind === 'Identifier') return source.parts[source.parts.length - 1];
    if (source.kind === 'Function' && source.args[0]) return this.defaultAlias(source.args[0]);
    return undefined;
  }

  /**
   * Proton's LATEST JOIN (each left row meets the newest matching right row) has no engine form.
   * Historically the right side is cut to its newest row per join key
   * (`ORDER BY _tp_time DESC LIMIT 1 BY keys`) and joined normally. When the keys cannot be told
   * apart from the ON clause, it falls back to an ANY join (one arbitrary match).
   */
  protected override joinHead(j: FromItem & { kind: 'Join' }): string {
    if (j.strictness !== 'LATEST') return super.joinHead(j);
    const { strictness: _s, ...rest } = j;
    return super.joinHead(this.latestKeys(j) ? rest : { ...j, strictness: 'ANY' });
  }

  protected override joinRight(item: FromItem, layout: Layout, join?: FromItem & { kind: 'Join' }): string {
    const keys = join?.strictness === 'LATEST' ? this.latestKeys(join) : undefined;
    if (!keys || (item.kind !== 'Table' && item.kind !== 'TableFunction'))
      return super.joinRight(item, layout);
    const alias = this.itemAlias(item) as string;
    const inner = this.fromItem({ ...item, alias }, layout.inner);
    return `(SELECT * FROM ${inner} ORDER BY _tp_time DESC LIMIT 1 BY ${keys.map(quoteIdentifier).join(', ')}) AS ${quoteIdentifier(alias)}`;
  }

  private itemAlias(item: FromItem): string | undefined {
    if (item.kind === 'Table') return item.alias ?? item.name;
    if (item.kind === 'TableFunction') return item.alias ?? this.defaultAlias(item.args[0]) ?? item.name;
    return undefined;
  }

  /** Right-side key columns of a LATEST join: `l.k = r.k` conjuncts where one side is qualified by the right alias. */
  private latestKeys(j: FromItem & { kind: 'Join' }): string[] | undefined {
    const alias = this.itemAlias(j.right);
    if (alias === undefined || !j.on) return undefined;
    const keys: string[] = [];
    const visit = (e: Expr): void => {
      if (e.kind === 'Binary' && e.op === 'AND') {
        visit(e.left);
        visit(e.right);
      } else if (e.kind === 'Binary' && e.op === '=') {
        for (const side of [e.left, e.right]) {
          if (side.kind === 'Identifier' && side.parts.length === 2 && side.parts[0] === alias)
            keys.push(side.parts[1] as string);
        }
      }
    };
    visit(j.on);
    return keys.length ? keys : undefined;
  }

  override fromItem(item: FromItem, layout: Layout): string {
    switch (item.kind) {
      case 'Table': {
        const alias = item.alias ?? item.name;
        if (item.database === undefined && this.inCte(item.name)) {
          return `${quoteIdentifier(item.name)}${item.alias ? ` AS ${quoteIdentifier(item.alias)}` : ''}`;
        }
        return `${this.tableSource(item.database, item.name, layout, item.span)}${item.final ? ' FINAL' : ''} AS ${quoteIdentifier(alias)}`;
      }
      case 'TableFunction':
        return this.tableFunction(item.name, item.args, item.alias, layout, item.span);
      case 'SubqueryTable':
        return `(${layout.brOpen}${this.query(item.query, layout.inner)}${layout.brClose})${item.alias ? ` AS ${quoteIdentifier(item.alias)}` : ''}`;
      default:
        return super.fromItem(item, layout);
    }
  }

  /** A resolved name as it goes in FROM: the engine table, a subquery, or the expanded view. */
  private tableSource(database: string | undefined, name: string, layout: Layout, span?: Span): string {
    const r = this.resolve(database, name);
    if (r.kind === 'engine_table' && r.database !== undefined) checkEngineTable(r.database, name, span);
    if (r.kind === 'view' && r.viewQuery) {
      if (this.viewDepth > 16)
        throw err('INCORRECT_QUERY', { detail: `View ${name} refers to itself (views nested too deeply)` });
      this.viewDepth++;
      try {
        return `(${this.query(r.viewQuery, layout.inner)})`;
      } finally {
        this.viewDepth--;
      }
    }
    return r.engineSql;
  }

  /** A stream argument of a table function (`s`, `db.s`, `table(s)`, `(SELECT ...)`, `dedup(s, k)`). */
  private sourceArg(e: Expr, layout: Layout): { sql: string; star: string } {
    if (e.kind === 'Identifier' && e.parts.length <= 2) {
      const [db, name] =
        e.parts.length === 2 ? [e.parts[0], e.parts[1] as string] : [undefined, e.parts[0] as string];
      if (db === undefined && this.inCte(name)) return { sql: quoteIdentifier(name), star: '*' };
      const r = this.resolve(db, name);
      const hidden = r.kind === 'view' ? [] : (r.hiddenColumns ?? []);
      const sql = this.tableSource(db, name, layout, e.span);
      return { sql, star: hidden.length ? `* EXCEPT (${hidden.map(quoteIdentifier).join(', ')})` : '*' };
    }
    if (e.kind === 'Subquery') return { sql: `(${this.query(e.query, layout.inner)})`, star: '*' };
    if (e.kind === 'Function') {
      const lower = e.name.toLowerCase();
      if (lower === 'table') {
        const [inner] = e.args;
        if (!inner || e.args.length !== 1)
          throw err('BAD_ARGUMENTS', { detail: 'table() takes exactly one stream' });
        return this.sourceArg(inner, layout);
      }
      return { sql: this.tableFunctionSql(e.name, e.args, layout, e.span), star: '*' };
    }
    throw err('BAD_ARGUMENTS', {
      detail: `Expected a stream, a view or a subquery as the source, got ${this.expr(e)}`,
    });
  }

  private tableFunction(
    name: string,
    args: readonly Expr[],
    alias: string | undefined,
    layout: Layout,
    span?: Span,
  ): string {
    const lower = name.toLowerCase();
    const as = alias ?? this.defaultAlias(args[0]);
    const suffix = as !== undefined ? ` AS ${quoteIdentifier(as)}` : '';
    if (lower === 'table') {
      const [inner] = args;
      if (!inner || args.length !== 1)
        throw err('BAD_ARGUMENTS', { detail: 'table() takes exactly one stream' });
      // table(s) reads what s reads historically; `*` hides the same storage columns.
      if (inner.kind === 'Identifier' && inner.parts.length <= 2) {
        const [db, n] =
          inner.parts.length === 2
            ? [inner.parts[0], inner.parts[1] as string]
            : [undefined, inner.parts[0] as string];
        return this.fromItem(
          {
            kind: 'Table',
            ...(db !== undefined ? { database: db } : {}),
            name: n,
            ...(as !== undefined ? { alias: as } : {}),
            span: inner.span,
          },
          layout,
        );
      }
      const src = this.sourceArg(inner, layout);
      if (src.star !== '*') return `(SELECT ${src.star} FROM ${src.sql})${suffix}`;
      return `${src.sql}${suffix}`;
    }
    return `${this.tableFunctionSql(name, args, layout, span)}${suffix}`;
  }

  /** A table function as FROM text, without alias (also used for INSERT INTO FUNCTION). */
  tableFunctionSql(name: string, args: readonly Expr[], layout: Layout, span?: Span): string {
    const lower = name.toLowerCase();
    const x = (e: Expr) => this.expr(e, PREC.lambda, layout);
    if (isStreamingTableFunction(lower)) {
      switch (lower) {
        case 'table': {
          const [inner] = args;
          if (!inner || args.length !== 1)
            throw err('BAD_ARGUMENTS', { detail: 'table() takes exactly one stream' });
          const src = this.sourceArg(inner, layout);
          return src.star === '*' ? src.sql : `(SELECT ${src.star} FROM ${src.sql})`;
        }
        case 'tumble': {
          const a = splitWindowArgs('tumble', args, 1);
          const src = this.sourceArg(a.source, layout);
          const w = this.windowSql(src, a.timeColumn, a.rest[0], layout);
          return tumbleSql(w, x(a.intervals[0] as Expr));
        }
        case 'hop': {
          const a = splitWindowArgs('hop', args, 2);
          const [slide, size] = a.intervals;
          if (!slide || !size || slide.kind !== 'Interval' || size.kind !== 'Interval') {
            throw err('BAD_ARGUMENTS', {
              detail: 'hop() needs a slide and a size interval, e.g. hop(s, ts, 1s, 5s)',
            });
          }
          const src = this.sourceArg(a.source, layout);
          const w = this.windowSql(src, a.timeColumn, a.rest[0], layout);
          return hopSql(w, slide, size, x(slide), x(size));
        }
        case 'dedup': {
          const [source, ...rest] = args;
          if (!source) throw err('BAD_ARGUMENTS', { detail: 'dedup() needs a source stream' });
          const keys = rest.filter((k) => k.kind !== 'Interval' && k.kind !== 'Number');
          if (!keys.length) throw err('BAD_ARGUMENTS', { detail: 'dedup() needs at least one key column' });
          const src = this.sourceArg(source, layout);
          const ttl = rest.find((k) => k.kind === 'Interval');
          const last = rest.at(-1);
          const call: DedupCall = {
            source: src,
            keys: keys.map(x),
            ...(ttl ? { ttl } : {}),
            ...(last?.kind === 'Number' && rest.length > keys.length ? { limit: Number(last.text) } : {}),
          };
          return (
            this.options.streamingDedup?.(call) ?? dedupSql({ source: src.sql, star: src.star }, call.keys)
          );
        }
        case 'session':
          throw err('NOT_IMPLEMENTED', {
            detail:
              'session() windows are only supported in streaming queries; a historical (table) session window is not implemented',
          });
        case 'changelog':
          throw err('NOT_IMPLEMENTED', {
            detail: 'changelog() (the changelog of a stream by key) is not supported yet',
          });
      }
    }
    const engineName = resolveTableFunctionName(name);
    if (!engineName) {
      const hint = suggestTableFunction(name);
      throw err('UNKNOWN_FUNCTION', { name, hint: hint ? `. Maybe you meant: ${hint}` : '' });
    }
    checkTableFunction(engineName, name, span);
    const first = args[0];
    if (STRUCTURE_FIRST.has(engineName) && first?.kind === 'String' && args.length > 1) {
      // `values('x nullable(string), y int', ...)`: the structure's types in the engine's names
      const structure = { ...first, value: this.structureString(first.value) };
      return `${engineName}(${this.list([structure, ...args.slice(1)], layout)})`;
    }
    return `${engineName}(${this.list(args, layout)})`;
  }

  /** A table function's structure `name type, ...` with each type in the engine's spelling. */
  private structureString(text: string): string {
    const columns: string[] = [];
    let depth = 0;
    let quote = '';
    let from = 0;
    for (let i = 0; i <= text.length; i++) {
      const c = text[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = '';
      } else if (c === "'" || c === '`' || c === '"') quote = c;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
      else if ((c === ',' && depth === 0) || c === undefined) {
        columns.push(text.slice(from, i));
        from = i + 1;
      }
    }
    return columns
      .map((col) => {
        const m = /^(\s*(?:`[^`]*`|"[^"]*"|[A-Za-z_][A-Za-z0-9_]*)\s+)(.+?)\s*$/s.exec(col);
        return m ? `${m[1]}${this.typeString(m[2] as string)}` : col;
      })
      .join(',');
  }

  private windowSql(
    src: { sql: string; star: string },
    timeColumn: Expr | undefined,
    tz: Expr | undefined,
    layout: Layout,
  ): WindowSql {
    const timeSql = timeColumn ? this.expr(timeColumn, PREC.lambda, layout) : '_tp_time';
    return {
      source: src.sql,
      star: src.star,
      timeColumn: timeSql,
      ...(tz ? { timeZone: this.expr(tz, PREC.lambda, layout) } : {}),
    };
  }

  /** A whole query, one line. */
  translateQuery(q: Query): string {
    return this.query(q, new Layout(false));
  }
}

function unknownType(name: string) {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const candidate of PROTON_TYPE_NAMES) {
    const d = distance(name.toLowerCase(), candidate);
    if (d < bestD) {
      bestD = d;
      best = candidate;
    }
  }
  return err('UNKNOWN_TYPE', { name, hint: best && bestD <= 3 ? `. Maybe you meant: ${best}` : '' });
}

function suggestTableFunction(name: string): string | undefined {
  const s = ['table', 'tumble', 'hop', 'session', 'dedup', 'changelog'].find(
    (n) => distance(n, name.toLowerCase()) <= 2,
  );
  return s ?? suggestFunctionName(name);
}
