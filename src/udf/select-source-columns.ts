import type { FromItem, SelectQuery } from '../sql/ast/query.ts';
import { isChangelogMode } from '../stream/stream-definition.ts';
import type { CatalogResolver } from '../streaming/catalog-resolver.ts';

/** What a SELECT reads, as far as JavaScript aggregates care. */
export interface SelectSource {
  /** Engine types of its columns, by name. */
  readonly columns: ReadonlyMap<string, string>;
  /** A changelog input (a changelog or kv stream read as a stream). */
  readonly changelog: boolean;
}

/** Table functions whose first argument is the stream they read (`table(s)`, `tumble(s, ...)`). */
const READS_FIRST_ARGUMENT = new Set(['table', 'tumble', 'hop', 'session', 'dedup', 'changelog']);

/** The stream a FROM item reads directly, as `[database, name]`; undefined for anything else. */
function streamOf(from: FromItem | undefined): [string | undefined, string] | undefined {
  if (!from) return undefined;
  if (from.kind === 'Table') return [from.database, from.name];
  if (from.kind === 'TableFunction' && READS_FIRST_ARGUMENT.has(from.name.toLowerCase())) {
    const first = from.args[0];
    if (first?.kind !== 'Identifier') return undefined;
    const parts = first.parts;
    return parts.length === 2 ? [parts[0], parts[1] as string] : [undefined, parts[0] as string];
  }
  return undefined;
}

/**
 * The columns a SELECT reads (engine types by name), when its FROM is a stream (or a
 * materialized view's target) read directly or through table(), tumble(), hop(), session() etc.
 * Joins, subqueries and views answer undefined: their columns' types are the engine's to know.
 */
export function selectSourceColumns(
  resolver: CatalogResolver,
  select: SelectQuery,
): SelectSource | undefined {
  const ref = streamOf(select.from);
  if (!ref) return undefined;
  const [db, name] = ref;
  const resolved = resolver.resolve(db, name);
  if (!resolved) return undefined;
  const def = resolver.streamDefinition(resolved, db, name);
  if (!def) return undefined;
  const changelog =
    select.from?.kind === 'Table' && (isChangelogMode(def.mode) || def.mode === 'versioned_kv');
  return { columns: new Map(def.columns.map((c) => [c.name, c.engineType])), changelog };
}
