import { mkdir, readdir } from 'node:fs/promises';
import { encodeRecord, type WalRecord, type WalRecordHeader } from './wal-record.ts';
import { parseSegmentFileName, type SegmentSummary, WalSegment } from './wal-segment.ts';

export interface WalOptions {
  /** Start a new segment once the active one is this large (default 64 MiB). */
  segmentBytes: number;
  /** ... or this old (default 10 minutes), so retention by time can drop whole segments. */
  segmentMaxAgeMs: number;
}

export const DEFAULT_WAL_OPTIONS: WalOptions = {
  segmentBytes: 64 * 1024 * 1024,
  segmentMaxAgeMs: 10 * 60 * 1000,
};

/** Where an append landed, for rolling back all or the tail of its records. */
export interface AppendMark {
  readonly segment: WalSegment;
  /** Offset of each appended record's frame. */
  readonly offsets: readonly number[];
  readonly headers: readonly WalRecordHeader[];
  readonly before: Readonly<Omit<SegmentSummary, 'ids' | 'producers'>> & {
    readonly idCount: number;
    readonly producers: SegmentSummary['producers'];
  };
}

/**
 * A stream's write-ahead log: segment files under its directory, the newest one active. Appends are
 * group commits (several records, one durable write); a failed insert rolls its records back. Old
 * segments are dropped by retention once their rows are durable elsewhere (see StreamStore).
 */
export class WriteAheadLog {
  private closedSegments: WalSegment[] = [];
  private active!: WalSegment;

  private constructor(
    readonly dir: string,
    private readonly options: WalOptions,
  ) {}

  /** Open (or create) the log in `dir`; `startSn` names the first segment of a new log. */
  static async open(
    dir: string,
    options: WalOptions = DEFAULT_WAL_OPTIONS,
    startSn = 0,
  ): Promise<WriteAheadLog> {
    await mkdir(dir, { recursive: true });
    const wal = new WriteAheadLog(dir, options);
    const firsts = (await readdir(dir))
      .map(parseSegmentFileName)
      .filter((n): n is number => n !== undefined)
      .sort((a, b) => a - b);
    for (let i = 0; i < firsts.length; i++) {
      const last = i === firsts.length - 1;
      const seg = await WalSegment.load(dir, firsts[i] as number, last);
      if (last) wal.active = seg;
      else wal.closedSegments.push(seg);
    }
    if (firsts.length === 0) wal.active = await WalSegment.create(dir, startSn);
    return wal;
  }

  /** The sequence number the next row gets. */
  get nextSn(): number {
    return this.active.summary.next;
  }

  /** First sequence number still in the log. */
  get firstSn(): number {
    return (this.closedSegments[0] ?? this.active).summary.first;
  }

  get bytes(): number {
    let n = this.active.summary.bytes;
    for (const s of this.closedSegments) n += s.summary.bytes;
    return n;
  }

  /** Summaries of every segment, oldest first (the last is the active one). */
  summaries(): SegmentSummary[] {
    return [...this.closedSegments, this.active].map((s) => s.summary);
  }

  /**
   * Append records and make them durable with one write (O_DSYNC). Records must continue the sequence.
   * Answers the mark to roll back to if the insert that follows fails.
   */
  async append(
    records: ReadonlyArray<{ header: WalRecordHeader; payload: Buffer }>,
    now = Date.now(),
  ): Promise<AppendMark> {
    await this.maybeRotate(now);
    const segment = this.active;
    const { ids, producers, ...rest } = segment.summary;
    const before = {
      ...rest,
      idCount: ids.length,
      producers: producers?.map((e) => [...e] as [string, number, number]),
    };
    const parts: Buffer[] = [];
    const offsets: number[] = [];
    let at = segment.summary.bytes;
    for (const r of records) {
      const encoded = encodeRecord(r.header, r.payload);
      offsets.push(at);
      for (const p of encoded) at += p.length;
      parts.push(...encoded);
    }
    // Durable when it answers (the segment is written O_DSYNC): one call, no separate datasync.
    const offset = segment.summary.bytes;
    try {
      await segment.append(parts);
    } catch (e) {
      await segment.truncate(offset).catch(() => undefined);
      throw e;
    }
    for (const r of records)
      segment.noteRecord(r.header.first, r.header.count, r.header.time, r.header.ids, r.header.producers);
    return { segment, offsets, headers: records.map((r) => r.header), before };
  }

  /** Undo the records of an append from record `from` on (they were never acknowledged). */
  async rollback(mark: AppendMark, from = 0): Promise<void> {
    const offset = mark.offsets[from];
    if (offset === undefined) return;
    await mark.segment.truncate(offset);
    const s = mark.segment.summary;
    const { idCount, producers, ...before } = mark.before;
    Object.assign(s, before, { bytes: offset });
    s.ids.length = idCount;
    if (producers) s.producers = producers;
    else delete s.producers;
    for (const h of mark.headers.slice(0, from))
      mark.segment.noteRecord(h.first, h.count, h.time, h.ids, h.producers);
    await mark.segment.resealed();
  }

  /** Records holding sequence numbers at or after `fromSn`, oldest first. */
  async *recordsFrom(fromSn: number): AsyncGenerator<WalRecord> {
    for (const seg of [...this.closedSegments, this.active]) {
      if (seg.summary.next <= fromSn || seg.summary.records === 0) continue;
      for (const r of await seg.readRecords()) if (r.header.first + r.header.count > fromSn) yield r;
    }
  }

  /** Continue the sequence at `sn` (only forward; the table holds rows the WAL no longer has). */
  async skipTo(sn: number): Promise<void> {
    if (sn <= this.nextSn) return;
    if (this.active.summary.records === 0) await this.active.remove();
    else this.closedSegments.push(await this.active.close());
    this.active = await WalSegment.create(this.dir, sn);
  }

  /** Seal the active segment and start a new one if it is full or old. */
  async maybeRotate(now = Date.now(), force = false): Promise<void> {
    const s = this.active.summary;
    if (s.records === 0) return;
    if (!force && s.bytes < this.options.segmentBytes && now - s.firstTime < this.options.segmentMaxAgeMs)
      return;
    const sealed = await this.active.close();
    this.closedSegments.push(sealed);
    this.active = await WalSegment.create(this.dir, s.next);
  }

  /** Closed segments, oldest first (candidates for retention). */
  sealedSegments(): readonly SegmentSummary[] {
    return this.closedSegments.map((s) => s.summary);
  }

  /** Delete the oldest sealed segment. */
  async dropOldest(): Promise<SegmentSummary | undefined> {
    const seg = this.closedSegments.shift();
    if (!seg) return undefined;
    await seg.remove();
    return seg.summary;
  }

  async close(): Promise<void> {
    await this.active.release();
  }
}
