import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where a write comes from in a producer's own ordered output: a materialized view's execution tags
 * each hand-over `{seq, part}` (src/streaming/result-sink.ts `OutputTag`, the same shape; the stream
 * layer sits below the executor, so it declares it again). Tags grow strictly in (seq, part) order.
 */
export interface ProducerPosition {
  readonly seq: number;
  readonly part: number;
}

/** A write tagged with its producer: written only if `tag` is after the producer's last one. */
export interface ProducerTag {
  readonly id: string;
  readonly tag: ProducerPosition;
}

/** Marks as WAL headers, segment summaries and the sidecar keep them: `[id, seq, part]`. */
export type MarkEntry = readonly [string, number, number];

export function positionAfter(a: ProducerPosition, b: ProducerPosition | undefined): boolean {
  return b === undefined || a.seq > b.seq || (a.seq === b.seq && a.part > b.part);
}

/** The sidecar file of a stream's WAL directory (written before WAL segments are deleted). */
export const PRODUCER_SIDECAR = 'producers.json';

/**
 * The last tag each producer wrote into one stream (README.md, "Producer tags"). A tagged write is
 * committed in a WAL record whose header names the tag, so the mark is durable and atomic with the
 * rows. At start the marks are rebuilt from the sidecar (marks of WAL segments since deleted by
 * retention) and every retained segment's summary.
 */
export class ProducerMarks {
  private readonly marks = new Map<string, ProducerPosition>();

  get(id: string): ProducerPosition | undefined {
    return this.marks.get(id);
  }

  /** Raise `id`'s mark to `tag` (never lowers it). */
  note(id: string, tag: ProducerPosition): void {
    if (positionAfter(tag, this.marks.get(id))) this.marks.set(id, { seq: tag.seq, part: tag.part });
  }

  noteAll(entries: Iterable<MarkEntry>): void {
    for (const [id, seq, part] of entries) this.note(id, { seq, part });
  }

  forget(id: string): void {
    this.marks.delete(id);
  }

  entries(): MarkEntry[] {
    return [...this.marks].map(([id, t]) => [id, t.seq, t.part] as const);
  }

  get size(): number {
    return this.marks.size;
  }

  /** Read the sidecar of `dir` (none: no marks). */
  static async loadSidecar(dir: string): Promise<MarkEntry[]> {
    try {
      const parsed = JSON.parse(await readFile(join(dir, PRODUCER_SIDECAR), 'utf8')) as unknown;
      if (!Array.isArray(parsed)) return [];
      return parsed.filter(
        (e): e is MarkEntry =>
          Array.isArray(e) && typeof e[0] === 'string' && Number.isFinite(e[1]) && Number.isFinite(e[2]),
      );
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }

  /** Write the sidecar atomically and durably (temp file, fsync, rename, fsync of the directory). */
  static async saveSidecar(dir: string, entries: readonly MarkEntry[]): Promise<void> {
    const path = join(dir, PRODUCER_SIDECAR);
    const tmp = `${path}.tmp`;
    await writeFile(tmp, JSON.stringify(entries));
    const h = await open(tmp, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
    await rename(tmp, path);
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  static async removeSidecar(dir: string): Promise<void> {
    await rm(join(dir, PRODUCER_SIDECAR), { force: true });
  }
}

/** The largest tag per producer among entries (a WAL record's or segment's marks). */
export function maxMarks(entries: Iterable<MarkEntry>): MarkEntry[] {
  const m = new ProducerMarks();
  m.noteAll(entries);
  return m.entries();
}
