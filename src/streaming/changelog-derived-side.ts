import { err } from '../errors/tributary-error.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';
import type { DerivedSource } from './stream-bindings.ts';

/**
 * `changelog(r, key...)` as a side of a join, where `r` is a CTE, subquery or view run as its own
 * query (one that filters or computes columns: `WITH r AS (SELECT i % 5 AS id, v FROM s WHERE i <
 * 50)`): the side is that query's rows, kept in its engine table with their own `_tp_sn`, read as
 * a versioned_kv stream keyed by `key...` (each row a version of its key, the latest winning), as
 * `changelog(s, key)` of a stream is (changelog-input.ts). Only the rows the query emits since the
 * join started are versions: it starts with the join. This is the definition the join planner
 * and the kept side state (join-side-state.ts) read the derived table through.
 */
export function derivedChangelogSide(
  source: DerivedSource,
  header: readonly string[],
  keys: readonly string[],
): StreamDefinition {
  const dot = source.table.indexOf('.');
  const db = source.table.slice(0, dot);
  const name = source.table.slice(dot + 1);
  const names = [
    ...header.filter((h) => h !== '_tp_sn'),
    ...(header.includes('_tp_time') ? [] : ['_tp_time']),
  ];
  for (const k of keys) {
    const bare = k.replace(/^`|`$/g, '');
    if (!names.includes(bare))
      throw err('BAD_ARGUMENTS', {
        detail: `changelog() key ${bare} is not a column of its query (columns: ${header.join(', ')})`,
      });
  }
  const column = (n: string) => ({ name: n, type: '', engineType: '' });
  return {
    db,
    name,
    columns: names.map(column),
    indexes: [],
    mode: 'versioned_kv',
    keyColumns: keys,
    orderBy: { proton: '', engine: '' },
    versionColumn: '_tp_sn',
    storageType: 'memory',
    logstoreRetentionBytes: 0,
    logstoreRetentionMs: 0,
    shards: 1,
    replicationFactor: 1,
    description: '',
    settings: {},
    createQuery: '',
  };
}
