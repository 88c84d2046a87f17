import type { Engine } from '../engine/engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { type StreamDefinition, TP_DELTA, TP_SN, TP_TIME } from '../stream/stream-definition.ts';
import { latestRowsOnly, rangeSource } from '../stream/stream-reads.ts';
import type { KeptSide } from './join-program.ts';
import type { JoinSideKind } from './join-side-read.ts';
import { P, SqlTemplate } from './sql-template.ts';

/**
 * A join side's state in an engine table (join-program.ts KeptSide): each step appends the side's
 * new rows, and now and then the table is compacted to the state itself, so what a step reads
 * grows with the state (keys, net rows), not with the side's history.
 */

/** The columns a kept table holds, in order: a kv side's every column, a rows side's stored ones. */
function keptColumns(def: StreamDefinition, kind: JoinSideKind): string[] {
  const columns = kind === 'kv' ? def.columns : def.columns.filter((c) => !c.alias);
  return [...columns.map((c) => c.name), TP_SN];
}

/** The side's rows matching `where` as the kept table stores them (a rows side's sign widened). */
function keptRows(def: StreamDefinition, kind: JoinSideKind, where: string): string {
  const columns = keptColumns(def, kind).map((c) =>
    kind === 'rows' && c === TP_DELTA ? `toInt64(${quoteIdent(c)}) AS ${quoteIdent(c)}` : quoteIdent(c),
  );
  return `SELECT ${columns.join(', ')} FROM ${rangeSource(def)} WHERE ${where}`;
}

/**
 * The state of a kept table, in its column order: a kv side's latest row per key; a rows side's
 * distinct rows each once with its net count as `_tp_delta` (its last time and sequence number),
 * those netting to zero dropped.
 */
function compactSelect(def: StreamDefinition, kind: JoinSideKind, table: string): string {
  if (kind === 'kv') return latestRowsOnly(def, table);
  const stored = keptColumns(def, kind).filter((c) => c !== TP_SN);
  const data = stored.filter((c) => c !== TP_TIME && c !== TP_DELTA).map(quoteIdent);
  const sn = quoteIdent(TP_SN);
  const outer = [
    ...stored.map((c) =>
      c === TP_TIME
        ? `__tp_t AS ${quoteIdent(c)}`
        : c === TP_DELTA
          ? `__tp_n AS ${quoteIdent(c)}`
          : quoteIdent(c),
    ),
    `__tp_last AS ${sn}`,
  ];
  const inner = `SELECT ${data.join(', ')}, argMax(${quoteIdent(TP_TIME)}, ${sn}) AS __tp_t, sum(${quoteIdent(TP_DELTA)}) AS __tp_n, max(${sn}) AS __tp_last FROM ${table} GROUP BY ${data.join(', ')} HAVING __tp_n != 0`;
  return `SELECT ${outer.join(', ')} FROM (${inner})`;
}

/**
 * Plan a kept side: the statement creating its table with the rows `(after, upTo]`, and the
 * program's description of it.
 */
export function planKeptSide(
  def: StreamDefinition,
  index: number,
  kind: JoinSideKind,
  table: string,
  after: number,
  upTo: number,
): { create: string; side: KeptSide } {
  const sn = quoteIdent(TP_SN);
  const columns = keptColumns(def, kind).map(quoteIdent).join(', ');
  return {
    create: `CREATE TABLE ${table} ENGINE = Memory AS ${keptRows(def, kind, `${sn} > ${after} AND ${sn} <= ${Math.max(after, upTo)}`)}`,
    side: {
      index,
      kind,
      table,
      after,
      append: new SqlTemplate(
        `INSERT INTO ${table} (${columns}) ${keptRows(def, kind, `${sn} > ${P.lo(index)} AND ${sn} <= ${P.hi(index)}`)}`,
      ),
      compact: compactSelect(def, kind, table),
    },
  };
}

/** Compact a kept table after this many appends, or once this many sequence numbers came in. */
const COMPACT_EVERY = 64;
const COMPACT_SPAN = 16_384;

/** What a checkpoint keeps of the kept sides: where each side's state starts. */
interface SavedKeptSides {
  readonly after: readonly (readonly [number, number])[];
}

/**
 * The kept sides of a join at run time: `advance` brings each side's table up to a step's end
 * before the step reads it. A checkpoint saves where each side's state starts; a restored run
 * rebuilds the tables from the streams (their rows up to the step it resumes at).
 */
export class KeptSides {
  /** Per side: rows with `_tp_sn <= upTo` (after `after`) are in its table. */
  private readonly upTo = new Map<number, number>();
  private readonly after = new Map<number, number>();
  private readonly appends = new Map<number, number>();
  /** Per side: the sequence number its table was last compacted as of. */
  private readonly compactedAt = new Map<number, number>();
  private rebuild = false;

  constructor(
    private readonly sides: readonly KeptSide[],
    private readonly engine: Engine,
    startAfter: readonly number[],
  ) {
    for (const s of sides) {
      this.after.set(s.index, s.after);
      this.upTo.set(s.index, Math.max(s.after, startAfter[s.index] ?? -1));
      this.appends.set(s.index, 0);
    }
  }

  /**
   * Bring every side's table up to the step's end (`__TRB_HI_i__`). `readsFrom`: per side, the
   * earliest sequence number the step reads its state as of, when not the step's start (an
   * aligned join's side with rows still waiting); the table is not compacted past it.
   */
  async advance(
    ranges: Readonly<Record<string, number>>,
    readsFrom: Readonly<Record<number, number>> = {},
  ): Promise<void> {
    if (this.rebuild) {
      this.rebuild = false;
      for (const s of this.sides) {
        await this.engine.query(`TRUNCATE TABLE ${s.table}`);
        this.upTo.set(s.index, this.after.get(s.index) ?? s.after);
        this.compactedAt.set(s.index, this.after.get(s.index) ?? s.after);
      }
    }
    for (const s of this.sides) {
      const from = this.upTo.get(s.index) ?? s.after;
      const lo = Math.min(ranges[P.lo(s.index)] ?? 0, readsFrom[s.index] ?? Number.POSITIVE_INFINITY);
      const hi = ranges[P.hi(s.index)] ?? 0;
      if (hi <= from) continue;
      // Compacted as of `from`, which must not pass this step's start (its parts read as of lo).
      const due =
        (this.appends.get(s.index) ?? 0) >= COMPACT_EVERY ||
        from - (this.compactedAt.get(s.index) ?? s.after) >= COMPACT_SPAN;
      if (due && from <= lo) await this.compact(s, from);
      await this.engine.query(s.append.fill({ [P.lo(s.index)]: from, [P.hi(s.index)]: hi }));
      this.upTo.set(s.index, hi);
      this.appends.set(s.index, (this.appends.get(s.index) ?? 0) + 1);
      // A step from the state's start (a side's history read in one step) reads no state as of
      // its start, so the table may be compacted as of its end at once.
      const after = this.after.get(s.index) ?? s.after;
      if (lo <= after && hi - from >= COMPACT_SPAN && (readsFrom[s.index] ?? hi) >= hi)
        await this.compact(s, hi);
    }
  }

  private async compact(s: KeptSide, at: number): Promise<void> {
    this.appends.set(s.index, 0);
    this.compactedAt.set(s.index, at);
    const next = `${s.table}_c`;
    await this.engine.query(`DROP TABLE IF EXISTS ${next}`);
    await this.engine.query(`CREATE TABLE ${next} ENGINE = Memory AS ${s.compact}`);
    await this.engine.query(`EXCHANGE TABLES ${s.table} AND ${next}`);
    await this.engine.query(`DROP TABLE ${next}`);
  }

  save(): SavedKeptSides {
    return { after: [...this.after] };
  }

  /** Take back a checkpoint's state: the tables are rebuilt before the next step reads them. */
  restore(saved: unknown): void {
    const s = saved as SavedKeptSides | undefined;
    for (const [i, after] of s?.after ?? []) this.after.set(i, after);
    this.rebuild = true;
  }
}
