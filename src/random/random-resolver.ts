import type { TableResolver } from '../sql/translator/resolver.ts';
import { randomBatchSql, shardSql } from './random-batch-sql.ts';
import { historicalBatchSize } from './random-settings.ts';
import type { RandomStreams } from './random-streams.ts';

/**
 * `base`, except that a random stream read historically (`table(s)`, or a bounded read inside a
 * streaming query) is a fresh batch of generated rows: `max_events` of them when the query sets
 * it, else one second's worth. Without max_events, streaming reads are unaffected: the planner
 * reads the random stream's storage by committed ranges, which its generator fills while the
 * query runs. With max_events the random stream is bounded: the query reads one batch of
 * max_events rows and ends, as Proton's does when its generator stops.
 */
export function randomStreamResolver(
  base: TableResolver,
  randoms: RandomStreams,
  maxEvents?: number,
): TableResolver {
  return {
    resolve(db, name) {
      const r = base.resolve(db, name);
      if (r?.kind !== 'stream' || r.database === undefined) return r;
      const random = randoms.get(r.database, r.name ?? name);
      if (!random) return r;
      const count = historicalBatchSize(random.record.settings, maxEvents);
      const shards = random.record.settings.shards;
      return {
        ...r,
        engineSql: `(${randomBatchSql(random.definition, count, { withSn: true, shards })})`,
        insertSql: r.insertSql ?? r.engineSql,
        hiddenColumns: ['_tp_sn', '_tp_shard'],
        // Streaming reads of its storage: `_tp_shard` from `_tp_sn` (numbered from 1).
        virtualColumns: [{ name: '_tp_shard', engineSql: shardSql('_tp_sn - 1', shards) }],
        // With max_events the random stream is a bounded source (Proton's generator ends after
        // max_events rows, and the query with it): the query reads one batch and ends.
        ...(maxEvents !== undefined ? { bounded: true } : {}),
      };
    },
    ...(base.resolveFunction ? { resolveFunction: (n: string) => base.resolveFunction?.(n) } : {}),
    ...(base.resolveDictionary
      ? { resolveDictionary: (d: string | undefined, n: string) => base.resolveDictionary?.(d, n) }
      : {}),
  };
}
