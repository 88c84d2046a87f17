import type { Setting } from '../sql/ast/expression.ts';
import type { Query } from '../sql/ast/query.ts';
import type { CreateStream, Statement } from '../sql/ast/statement.ts';
import { checkQuerySetting } from '../sql/translator/engine-allow-list.ts';
import { isProtonQuerySetting } from '../sql/translator/proton-settings.ts';
import { STREAM_TYPE_CHECKS } from '../stream/table-check-settings.ts';

/**
 * Settings a `SET` statement gives the statements after it in the same request (the REST API keeps
 * no session between requests, so a request's script is the session; docs/sql-reference.md, "SET").
 */
export type SessionSettings = readonly Setting[];

/** Refuse a SET naming a setting no query may carry (the same rule as a query's SETTINGS clause). */
export function checkSessionSettings(settings: SessionSettings): void {
  for (const s of settings) if (!isProtonQuerySetting(s.name)) checkQuerySetting(s);
}

/** `earlier` then `later`, a later value of the same name replacing the earlier one. */
export function mergeSessionSettings(earlier: SessionSettings, later: SessionSettings): SessionSettings {
  const names = new Set(later.map((s) => s.name.toLowerCase()));
  return [...earlier.filter((s) => !names.has(s.name.toLowerCase())), ...later];
}

/** Session settings first, the query's own SETTINGS after them and winning over them. */
function withQuerySettings(own: readonly Setting[] | undefined, session: SessionSettings): Setting[] {
  const mine = new Set((own ?? []).map((s) => s.name.toLowerCase()));
  return [...session.filter((s) => !mine.has(s.name.toLowerCase())), ...(own ?? [])];
}

function queryWith(q: Query, session: SessionSettings): Query {
  if (q.kind === 'Union') return { ...q, queries: q.queries.map((m) => queryWith(m, session)) };
  return { ...q, settings: withQuerySettings(q.settings, session) };
}

/**
 * A CREATE STREAM gets the session's switched-off type checks (a `SET
 * allow_suspicious_low_cardinality_types = 1` before it) in its SETTINGS, under its own: the
 * stream keeps them for its tables (src/stream/table-check-settings.ts). Other settings of the
 * session are for queries and stay out of the stream's definition.
 */
function streamWithTypeChecks(statement: CreateStream, session: SessionSettings): Statement {
  const checks = session.filter((s) => STREAM_TYPE_CHECKS.has(s.name.toLowerCase()));
  if (checks.length === 0) return statement;
  return { ...statement, settings: withQuerySettings(statement.settings, checks) };
}

/**
 * The statement as if it had been written with the session's settings: a SELECT (each member of a
 * UNION) gets them in its SETTINGS clause, under its own; so do the SELECT of an INSERT ... SELECT
 * and the statement an EXPLAIN explains; a CREATE STREAM gets the type checks it switches off.
 * Other statements take no query settings and are unchanged.
 */
export function applySessionSettings(statement: Statement, session: SessionSettings | undefined): Statement {
  if (!session || session.length === 0) return statement;
  switch (statement.kind) {
    case 'Select':
    case 'Union':
      return queryWith(statement, session);
    case 'Insert':
      return statement.query ? { ...statement, query: queryWith(statement.query, session) } : statement;
    case 'Explain':
      return { ...statement, statement: applySessionSettings(statement.statement, session) };
    case 'CreateStream':
      return statement.variant === 'STREAM' ? streamWithTypeChecks(statement, session) : statement;
    default:
      return statement;
  }
}
