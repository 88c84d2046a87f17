import { isStreamingQuery } from '../sql/analyzer/streaming.ts';
import type { Query } from '../sql/ast/query.ts';
import type { TableResolver } from '../sql/translator/resolver.ts';
import { translateQuery } from '../sql/translator/translate.ts';

/**
 * The external tables (`db.name`) a query reads, directly or through views: every name the query's
 * translation resolves to an external table. A query the translator cannot print (it is planned
 * and refused with its own error later) reads none.
 */
export function externalTablesRead(query: Query, resolver: TableResolver): Set<string> {
  const out = new Set<string>();
  const recording: TableResolver = {
    resolve(db, name) {
      const r = resolver.resolve(db, name);
      if (r?.kind === 'external_table' && r.database !== undefined)
        out.add(`${r.database}.${r.name ?? name}`);
      return r;
    },
    ...(resolver.resolveFunction ? { resolveFunction: (n: string) => resolver.resolveFunction?.(n) } : {}),
    ...(resolver.resolveDictionary
      ? { resolveDictionary: (d: string | undefined, n: string) => resolver.resolveDictionary?.(d, n) }
      : {}),
  };
  for (const walk of [
    () => isStreamingQuery(query, recording),
    () => translateQuery(query, { resolver: recording, protonColumnNames: false }),
  ]) {
    try {
      walk();
    } catch {
      // planning reports it
    }
  }
  return out;
}
