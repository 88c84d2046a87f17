import type { CommittedRanges } from './source-cursor.ts';

/**
 * Committed positions of the derived sources of one query (the output tables of its nested
 * queries), published in-process as the nested queries emit; other keys go to `base`.
 */
export class DerivedRanges implements CommittedRanges {
  private readonly committed = new Map<string, number>();
  private readonly listeners = new Map<string, Set<(toSn: number) => void>>();

  constructor(private readonly base: CommittedRanges) {}

  get shared() {
    return this.base.shared;
  }

  static isDerivedKey(key: string): boolean {
    return key.startsWith('derived:');
  }

  committedSn(key: string): number {
    if (!DerivedRanges.isDerivedKey(key)) return this.base.committedSn(key);
    return this.committed.get(key) ?? -1;
  }

  subscribe(key: string, listener: (toSn: number) => void): () => void {
    if (!DerivedRanges.isDerivedKey(key)) return this.base.subscribe(key, listener);
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(listener);
    return () => set?.delete(listener);
  }

  recentCommitEnds(key: string, afterSn: number): number[] {
    if (DerivedRanges.isDerivedKey(key)) return [];
    return this.base.recentCommitEnds?.(key, afterSn) ?? [];
  }

  read<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    return this.base.read(
      keys.filter((k) => !DerivedRanges.isDerivedKey(k)),
      work,
    );
  }

  resolveReads(sql: string): string {
    return this.base.resolveReads(sql);
  }

  /** The nested query committed rows up to `toSn` into the derived table `key`. */
  publish(key: string, toSn: number): void {
    this.committed.set(key, toSn);
    for (const l of this.listeners.get(key) ?? []) l(toSn);
  }
}
