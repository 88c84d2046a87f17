import type { StreamStore } from '../stream/stream-store.ts';
import { SharedStepReads } from './shared-step-reads.ts';
import type { CommittedRanges } from './source-cursor.ts';

function split(key: string): [string, string] {
  const dot = key.indexOf('.');
  return [key.slice(0, dot), key.slice(dot + 1)];
}

/** The stream store's committed positions, notifications and read locks, keyed `db.name`, for the executor. */
export function storeRanges(
  streams: StreamStore,
  shared: SharedStepReads = new SharedStepReads(),
): CommittedRanges {
  return {
    committedSn: (key) => {
      const [db, name] = split(key);
      return streams.committedSn(db, name);
    },
    subscribe: (key, listener) => {
      const [db, name] = split(key);
      return streams.subscribe(db, name, (range) => listener(range.toSn));
    },
    read: (keys, work) => streams.read(keys, work),
    resolveReads: (sql) => streams.resolveFrontRanges(sql),
    recentCommitEnds: (key, afterSn) => {
      const [db, name] = split(key);
      return streams.recentCommitEnds(db, name, afterSn);
    },
    shared,
  };
}
