import type { CommittedRanges } from '../streaming/source-cursor.ts';
import type { RandomStreams } from './random-streams.ts';

/**
 * `base`, with a random stream's generator running while at least one subscriber (a streaming
 * query's source) listens to it: subscribing acquires the generator, unsubscribing releases it.
 */
export function randomAwareRanges(base: CommittedRanges, randoms: RandomStreams): CommittedRanges {
  return {
    // Steps over the same ranges keep sharing their reads (shared-step-reads.ts).
    ...(base.shared ? { shared: base.shared } : {}),
    committedSn: (key) => base.committedSn(key),
    read: (keys, work) => base.read(keys, work),
    resolveReads: (sql) => base.resolveReads(sql),
    recentCommitEnds: (key, afterSn) => base.recentCommitEnds?.(key, afterSn) ?? [],
    subscribe: (key, listener) => {
      const unsubscribe = base.subscribe(key, listener);
      const generator = randoms.isRandom(key) ? randoms.generator(key) : undefined;
      generator?.acquire();
      let released = false;
      return () => {
        unsubscribe();
        if (released) return;
        released = true;
        generator?.release();
      };
    },
  };
}
