/**
 * The SQL front end: Proton dialect -> AST -> (canonical SQL | ClickHouse SQL | Analysis).
 * See src/sql/README.md for the AST, how to walk it, and the translator's resolver contract.
 */

// analysis
export {
  type Analysis,
  type AnalyzeOptions,
  analyze,
  type ColumnRef,
  fillResultTypes,
  queryType,
} from './analyzer/analyze.ts';
export { type DdlParseResult, parseDdl } from './analyzer/parse-ddl.ts';
export {
  allSelects,
  andAll,
  conjuncts,
  findAggregates,
  findStreamingFunctions,
  fromSources,
  isAggregation,
  referencedColumns,
} from './analyzer/query-facts.ts';
export { type RewindPredicate, rewindPredicates } from './analyzer/rewind.ts';
export { isStreamingQuery } from './analyzer/streaming.ts';
export { sameTree, withoutSpans } from './ast/compare.ts';
export type * from './ast/index.ts';
export { lineColumn, NO_SPAN, spanOf } from './ast/span.ts';
export { childNodes, findAll, isNode, replace, transform, walk } from './ast/walk.ts';
export { type CallMapping, mapFunctionCall } from './names/function-calls.ts';
// names
export {
  isAggregateName,
  isStreamingOnlyFunction,
  isStreamingTableFunction,
  protonFunctionNames,
  type ResolvedFunction,
  resolveFunctionName,
  resolveTableFunctionName,
  suggestFunctionName,
  toProtonFunctionName,
} from './names/function-catalog.ts';
export { STREAMING_ONLY_FUNCTIONS, STREAMING_TABLE_FUNCTIONS } from './names/function-exceptions.ts';
// parsing
export { parseExpression, parseQuery, parseStatement, parseStatements, parseType } from './parser/parse.ts';
// printing
export { formatSql, type PrintOptions, print, printExpression } from './printer/format.ts';
export { isSqlSyntaxError, SqlSyntaxError, syntaxErrorToTributary } from './syntax/syntax-error.ts';
// translation
export { protonColumnName } from './translator/column-names.ts';
export { isProtonQuerySetting, PROTON_QUERY_SETTINGS } from './translator/proton-settings.ts';
export {
  mapResolver,
  type ResolvedColumn,
  type ResolvedKind,
  type ResolvedTable,
  type TableResolver,
} from './translator/resolver.ts';
export {
  type TranslateOptions,
  translate,
  translateColumnDef,
  translateCreateStreamAsTable,
  translateExpression,
  translateQuery,
  translateType,
} from './translator/translate.ts';
export { toClickHouseType, toProtonType } from './types/proton-types.ts';
