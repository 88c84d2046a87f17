import { parse, stringify } from 'lossless-json';
import type { ResultColumn } from '../queries/query-types.ts';
import type { StreamStore } from '../stream/stream-store.ts';
import { type OutputTag, type ResultSink, tagAfter } from '../streaming/result-sink.ts';
import { boolConversions } from './bool-into-target.ts';
import type { PauseGate } from './pause-gate.ts';

export interface TargetWriterOptions {
  streams: StreamStore;
  db: string;
  /** The target stream's name. */
  target: string;
  /** The producer id of the writes: the view's id. */
  producerId: string;
  gate: PauseGate;
}

/** What a view has written, for stats and the bench. */
export interface WriteCounters {
  rows: number;
  writes: number;
  /** Epoch ms of the last committed write (0: none yet). */
  lastWriteAt: number;
}

/**
 * The sink of a materialized view: each hand-over of rows becomes one ingest into the target stream
 * through the stream store (the same writer and WAL as any ingest, so tails and downstream views
 * see the rows). Columns are matched by name: a result column the target lacks (`_tp_sn`, a
 * `_tp_delta` of an append target) is not written, target columns the result lacks take their
 * defaults, and `_tp_time` is the result's own when it has one (else the commit time).
 *
 * A tagged hand-over (durable executions) is written with the view as producer: one whose tag is
 * not after the target's last durable tag for this view is acknowledged without writing.
 */
export class TargetWriter implements ResultSink {
  readonly counters: WriteCounters = { rows: 0, writes: 0, lastWriteAt: 0 };
  private header: readonly ResultColumn[] = [];

  constructor(private readonly o: TargetWriterOptions) {}

  /** The result header of the execution about to run (set before each run). */
  setHeader(header: readonly ResultColumn[]): void {
    this.header = header;
  }

  async rows(rows: readonly string[], tag?: OutputTag): Promise<void> {
    if (rows.length === 0) return;
    await this.o.gate.enter();
    try {
      const { streams, db, target } = this.o;
      // The branches of a UNION each write as a producer of their own (their tags are apart).
      const producerId = tag?.branch ? `${this.o.producerId}.u${tag.branch}` : this.o.producerId;
      if (tag && !tagAfter(tag, streams.lastProducerTag(db, target, producerId))) return;
      const options = tag ? { producer: { id: producerId, tag: { seq: tag.seq, part: tag.part } } } : {};
      const { columns, lines, sameTypes } = this.writable(rows);
      // Values of the target's own column types, as the engine wrote them, go in as they are;
      // any other values are checked as an ingest body's are.
      if (sameTypes) await streams.ingestEngineRows(db, target, columns, lines, options);
      else await streams.ingestBody(db, target, compactBody(columns, lines), 'compact', 'utf-8', options);
      this.counters.rows += rows.length;
      this.counters.writes++;
      this.counters.lastWriteAt = Date.now();
    } finally {
      this.o.gate.leave();
    }
  }

  /**
   * The rows with only the columns the target has (booleans made what its column takes), and
   * whether each of those columns has the result column's own type.
   */
  private writable(rows: readonly string[]): {
    columns: string[];
    lines: readonly string[];
    sameTypes: boolean;
  } {
    const def = this.o.streams.require(this.o.db, this.o.target).value;
    const types = new Map(def.columns.filter((c) => !c.alias).map((c) => [c.name, c.type]));
    const writable = new Set(types.keys());
    const keep = this.header.flatMap((c, i) => (writable.has(c.name) && c.name !== '_tp_sn' ? [i] : []));
    const columns = keep.map((i) => (this.header[i] as ResultColumn).name);
    const converts = boolConversions(this.header, def.columns);
    let data: readonly string[] = rows;
    if (keep.length !== this.header.length || converts.size > 0) {
      data = rows.map((line) => {
        const row = parse(line) as unknown[];
        return stringify(keep.map((i) => converts.get(i)?.(row[i]) ?? row[i])) ?? '[]';
      });
    }
    const sameTypes =
      converts.size === 0 &&
      keep.every((i) => types.get(this.header[i]?.name ?? '') === this.header[i]?.type);
    return { columns, lines: data, sameTypes };
  }
}

/** A compact ingest body of JSONCompactEachRow lines of `columns`. */
function compactBody(columns: readonly string[], lines: readonly string[]): Buffer {
  return Buffer.from(`{"columns":${JSON.stringify(columns)},"data":[${lines.join(',')}]}`);
}
