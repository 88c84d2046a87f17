import type { Engine } from '../engine/engine.ts';
import { ALIGN_PREV_SN, ALIGN_PREV_UNTIL, ALIGN_UNTIL } from './join-alignment.ts';
import { ChangelogAlignment, type TimedRow } from './join-changelog-alignment.ts';
import { at2 } from './join-left-netting.ts';
import {
  type ChangelogJoin,
  type EnrichJoin,
  JOIN_MIN_LEFT,
  JOIN_MIN_RIGHT,
  type JoinProgram,
  type RangeJoin,
} from './join-program.ts';
import { KeptSides } from './join-side-state.ts';
import { P, type SqlTemplate } from './sql-template.ts';

export type TailVariant = 'inner' | 'initial' | 'netted';

/** One fill of a step's SQL: the union of a step's parts is its rows. */
export interface StepPart {
  readonly values: Readonly<Record<string, string | number>>;
  /**
   * Fill a variant of the step's SQL: `inner`, the query's INNER JOIN form (the parts that right
   * rows of a LEFT JOIN trigger); `initial`, the query over a kv stream's latest row per key;
   * `netted`, a right side's change to a LEFT JOIN of changelog inputs (join-left-netting.ts).
   */
  readonly variant?: TailVariant;
}

/**
 * What a step reads (range in, parts out): given each source's new range `(lo, hi]`, the fills of
 * the step's SQL. A query over one stream has one part, the ranges themselves; a join has one part
 * per side that got rows (join-program.ts), and the range join keeps its watermarks here.
 */
export interface StepInputs {
  parts(ranges: Readonly<Record<string, number>>): Promise<StepPart[]>;
  /**
   * When a step with no new rows is due (wall-clock ms): an aligned join's left rows waiting for a
   * right side quiet for `join_quiesce_threshold_ms`. The step runs with `QUIESCE` set in its ranges.
   */
  quiesceAt?(): number | undefined;
  /** What the inputs keep from step to step, for a checkpoint (JSON); none when stateless. */
  save?(): unknown;
  /** Take back what `save` answered. */
  restore?(saved: unknown): void;
}

/** Set (1) in the ranges of a step that releases an aligned join's waiting rows (StepInputs.quiesceAt). */
export const QUIESCE = '__TRB_QUIESCE__';

/** A kv stream read on its own: the first step reads its latest row per key. */
class KvInitialInputs implements StepInputs {
  private first = true;

  async parts(ranges: Readonly<Record<string, number>>): Promise<StepPart[]> {
    const initial = this.first;
    this.first = false;
    return [{ values: ranges, ...(initial ? { variant: 'initial' as const } : {}) }];
  }

  save(): unknown {
    return { first: this.first };
  }

  restore(saved: unknown): void {
    this.first = (saved as { first: boolean }).first;
  }
}

/** The inputs of a program: plain ranges, or its join's parts. */
export function stepInputs(
  join: JoinProgram | undefined,
  startAfter: readonly number[],
  engine: Engine,
  kvInitial = false,
): StepInputs {
  // A streaming read of a versioned_kv / changelog_kv stream: its first step is the latest row
  // per key (the compacted state), then the changes as they come (streaming-sql-notes.md §1.2).
  if (!join && kvInitial) return new KvInitialInputs();
  if (!join) return { parts: async (ranges) => [{ values: ranges }] };
  switch (join.kind) {
    case 'expand':
      return {
        parts: async (ranges) => expandParts(join.sources, startAfter, ranges, join.leftJoin ?? false),
      };
    case 'enrich':
      return new EnrichInputs(join, engine, startAfter);
    case 'range':
      return new RangeJoinInputs(join, startAfter, engine);
    case 'changelog':
      return new ChangelogInputs(join, engine, startAfter);
  }
}

/** A join of changelog inputs: each side's kept state brought up to the step, then its parts. */
class ChangelogInputs implements StepInputs {
  private readonly kept: KeptSides;
  private alignment: ChangelogAlignment | undefined;
  private savedAlignment: unknown;

  constructor(
    private readonly join: ChangelogJoin,
    private readonly engine: Engine,
    startAfter: readonly number[],
  ) {
    this.kept = new KeptSides(join.kept ?? [], engine, startAfter);
  }

  async parts(ranges: Readonly<Record<string, number>>): Promise<StepPart[]> {
    if (this.join.align) return this.alignedParts(ranges, this.join.align);
    await this.kept.advance(ranges);
    return changelogParts(this.join.sides, ranges, this.join.leftJoin?.left);
  }

  /**
   * Join alignment (join-changelog-alignment.ts): the sides' new rows are pulled in turn, and
   * each change that applies is its own round of parts, against the other side as applied then.
   */
  private async alignedParts(
    ranges: Readonly<Record<string, number>>,
    align: NonNullable<ChangelogJoin['align']>,
  ): Promise<StepPart[]> {
    const sides = this.join.sides.map((s) => s.index) as [number, number];
    if (!this.alignment) {
      this.alignment = new ChangelogAlignment(align.lagNs, [
        ranges[P.lo(sides[0])] ?? 0,
        ranges[P.lo(sides[1])] ?? 0,
      ]);
      if (this.savedAlignment !== undefined) this.alignment.restore(this.savedAlignment);
    }
    const a = this.alignment;
    // The kept tables are read as of each side's applied rows: no compaction past them.
    await this.kept.advance(ranges, { [sides[0]]: a.done[0], [sides[1]]: a.done[1] });
    const rows = await Promise.all(
      ([0, 1] as const).map(async (k) => {
        const i = sides[k];
        const hi = ranges[P.hi(i)] ?? 0;
        if (hi <= a.seen[k]) return [];
        const sql = align.times[k].fill({ [P.lo(i)]: a.seen[k], [P.hi(i)]: hi });
        const text = (await this.engine.query(sql, { format: 'JSONCompactEachRow' })).text();
        return text
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => {
            const [sn, t] = JSON.parse(line) as [number | string, string];
            return { sn: Number(sn), t: BigInt(t) };
          });
      }),
    );
    const at: [number, number] = [a.done[0], a.done[1]];
    const parts: StepPart[] = [];
    for (const change of a.pull(rows as [TimedRow[], TimedRow[]])) {
      const values: Record<string, number> = { ...ranges };
      for (const k of [0, 1] as const) {
        const i = sides[k];
        values[P.lo(i)] = k === change.side ? change.from : at[k];
        values[P.hi(i)] = k === change.side ? change.to : at[k];
      }
      at[change.side] = change.to;
      parts.push(...changelogParts(this.join.sides, values, this.join.leftJoin?.left));
    }
    return parts;
  }

  save(): unknown {
    return { kept: this.kept.save(), ...(this.alignment ? { alignment: this.alignment.save() } : {}) };
  }

  restore(saved: unknown): void {
    const s = saved as { kept?: unknown; alignment?: unknown };
    this.kept.restore(s.kept);
    this.savedAlignment = s.alignment;
    this.alignment?.restore(s.alignment);
  }
}

/**
 * Dynamic enrichment: only left rows make output; the right side is its latest row per key up to
 * this step, read from the kept rows (join-program.ts EnrichJoin) when there are.
 */
class EnrichInputs implements StepInputs {
  private readonly kept: KeptSides;
  /** Join alignment: the largest right time so far (ns), and what earlier steps joined. */
  private rightTime: bigint | undefined;
  private prevUntil: string | undefined;
  private prevSn: number | undefined;
  /** Join alignment: every left row with `_tp_sn <= joinedUpTo` has been joined. */
  private joinedUpTo: number | undefined;
  /** Join alignment: when the right side last had rows (wall-clock ms; the query's start at first). */
  private rightDataAt = Date.now();

  constructor(
    private readonly join: EnrichJoin,
    private readonly engine: Engine,
    private readonly startAfter: readonly number[],
  ) {
    this.kept = new KeptSides(join.kept ?? [], engine, startAfter);
  }

  async parts(ranges: Readonly<Record<string, number>>): Promise<StepPart[]> {
    const { left, right } = this.join;
    await this.kept.advance(ranges);
    if (this.join.align) return this.alignedParts(ranges, this.join.align);
    if ((ranges[P.hi(left)] ?? 0) <= (ranges[P.lo(left)] ?? 0)) return [];
    const states: Record<string, number> = {};
    for (const i of this.join.states ?? []) Object.assign(states, stateOf(i, ranges[P.hi(i)] ?? 0));
    return [{ values: { ...ranges, [P.lo(right)]: this.rightLo(), ...states } }];
  }

  /**
   * Join alignment (join-alignment.ts): every left row since the query started whose time the
   * right side has reached (its largest time plus the lag) and that no earlier step joined.
   */
  private async alignedParts(
    ranges: Readonly<Record<string, number>>,
    align: NonNullable<EnrichJoin['align']>,
  ): Promise<StepPart[]> {
    const { left, right } = this.join;
    const start = this.startAfter[left] ?? -1;
    if (ranges[QUIESCE] === 1) return this.releaseWaiting(ranges);
    if ((ranges[P.hi(right)] ?? 0) > (ranges[P.lo(right)] ?? 0)) {
      this.rightDataAt = Date.now();
      const text = (
        await this.engine.query(align.rightTime.fill(ranges), { format: 'JSONCompactEachRow' })
      ).text();
      const v = (JSON.parse(text.split('\n')[0] ?? '[]') as (string | null)[])[0];
      if (v !== null && v !== undefined && v !== '\\N') {
        const t = BigInt(v);
        if (this.rightTime === undefined || t > this.rightTime) this.rightTime = t;
      }
    }
    const until = this.rightTime === undefined ? NO_BOUND : (this.rightTime + align.lagNs).toString();
    const hiL = ranges[P.hi(left)] ?? 0;
    const prevSn = this.prevSn ?? start;
    const prevUntil = this.prevUntil ?? NO_BOUND;
    if (hiL <= prevSn && until === prevUntil) return [];
    const from = this.joinedUpTo ?? start;
    this.prevSn = hiL;
    this.prevUntil = until;
    // The left rows still waiting after this step: the next step reads from the first of them.
    if (hiL > from) {
      const sql = align.pendingSn.fill({ ...ranges, [P.lo(left)]: from, [ALIGN_UNTIL]: until });
      const text = (await this.engine.query(sql, { format: 'JSONCompactEachRow' })).text();
      const v = (JSON.parse(text.split('\n')[0] ?? '[]') as (string | null)[])[0];
      this.joinedUpTo = v === null || v === undefined || v === '\\N' ? hiL : Number(v) - 1;
    }
    return [
      {
        values: {
          ...ranges,
          [P.lo(left)]: from,
          [P.lo(right)]: this.rightLo(),
          [ALIGN_UNTIL]: until,
          [ALIGN_PREV_UNTIL]: prevUntil,
          [ALIGN_PREV_SN]: prevSn,
        },
      },
    ];
  }

  /**
   * The right side has been quiet for `join_quiesce_threshold_ms` while left rows wait: join them
   * all with the right side as it is (Proton's JoinTransformWithAlignment, "left input in quiesce"),
   * then wait again as before for the left rows that come next.
   */
  private releaseWaiting(ranges: Readonly<Record<string, number>>): StepPart[] {
    const { left, right } = this.join;
    const start = this.startAfter[left] ?? -1;
    const from = this.joinedUpTo ?? start;
    const upTo = this.prevSn ?? start;
    this.rightDataAt = Date.now();
    if (upTo <= from) return [];
    this.joinedUpTo = upTo;
    return [
      {
        values: {
          ...ranges,
          [P.lo(left)]: from,
          [P.hi(left)]: upTo,
          [P.lo(right)]: this.rightLo(),
          [ALIGN_UNTIL]: NO_UPPER_BOUND,
          [ALIGN_PREV_UNTIL]: NO_BOUND,
          [ALIGN_PREV_SN]: from,
        },
      },
    ];
  }

  quiesceAt(): number | undefined {
    const ms = this.join.align?.quiesceMs;
    if (ms === undefined) return undefined;
    const waiting = (this.joinedUpTo ?? this.startAfter[this.join.left] ?? -1) < (this.prevSn ?? -1);
    return waiting ? this.rightDataAt + ms : undefined;
  }

  /** Where a step reads the right side from: the query's start for an append right side. */
  private rightLo(): number {
    return this.join.rightFromStart ? (this.startAfter[this.join.right] ?? -1) : -1;
  }

  save(): unknown {
    return {
      kept: this.kept.save(),
      ...(this.rightTime !== undefined ? { rightTime: this.rightTime.toString() } : {}),
      ...(this.prevUntil !== undefined ? { prevUntil: this.prevUntil, prevSn: this.prevSn } : {}),
      ...(this.joinedUpTo !== undefined ? { joinedUpTo: this.joinedUpTo } : {}),
    };
  }

  restore(saved: unknown): void {
    const s = saved as {
      kept?: unknown;
      rightTime?: string;
      prevUntil?: string;
      prevSn?: number;
      joinedUpTo?: number;
    };
    this.joinedUpTo = s.joinedUpTo;
    this.kept.restore(s.kept);
    this.rightTime = s.rightTime === undefined ? undefined : BigInt(s.rightTime);
    this.prevUntil = s.prevUntil;
    this.prevSn = s.prevSn;
  }
}

/** A side of a join of changelog inputs read whole, as of `at` (join-side-read.ts). */
function stateOf(i: number, at: number): Record<string, number> {
  return { [P.at(i)]: at, [P.all(i)]: 1, [P.sign(i)]: 1 };
}

/**
 * The parts of a join of changelog inputs (join-program.ts ChangelogJoin), in emit order: per
 * side with new rows, its retractions then its additions, against the sides before it as of
 * this step's end and the sides after it as of the step's start (a LEFT JOIN: right side first).
 */
function changelogParts(
  sides: ChangelogJoin['sides'],
  ranges: Readonly<Record<string, number>>,
  left: readonly boolean[] | undefined,
): StepPart[] {
  const parts: StepPart[] = [];
  // The sides in the order their changes apply: with LEFT JOINs the last side first, so that the
  // left rows of a step (a query's first step: the sides' history) meet the right sides as of the
  // step's end and no defaults row is sent only to be retracted.
  const order = sides.map((s, k) => ({ i: s.index, k }));
  if (left) order.reverse();
  order.forEach(({ i, k }, p) => {
    const lo = ranges[P.lo(i)] ?? 0;
    const hi = ranges[P.hi(i)] ?? 0;
    if (hi <= lo) return;
    const others: Record<string, number> = {};
    order.forEach(({ i: j }, q) => {
      if (q !== p) Object.assign(others, stateOf(j, q < p ? (ranges[P.hi(j)] ?? 0) : (ranges[P.lo(j)] ?? 0)));
    });
    if (left?.[k]) {
      // The right side of a LEFT JOIN: the join with its state as of hi less as of lo, netted;
      // the other sides as of the same points in both.
      const earlier: Record<string, number> = {};
      for (const { i: j } of order) earlier[at2(j)] = j === i ? lo : (others[P.at(j)] ?? 0);
      parts.push({ values: { ...ranges, ...others, ...stateOf(i, hi), ...earlier }, variant: 'netted' });
      return;
    }
    // A kv side: its keys' rows as of lo (-1), then as of hi (+1); a changelog side: its range's
    // rows with their own signs, once.
    const fills: ReadonlyArray<readonly [number, number]> =
      sides[k]?.kind === 'rows'
        ? [[hi, 1]]
        : [
            [lo, -1],
            [hi, 1],
          ];
    for (const [at, sign] of fills)
      parts.push({ values: { ...ranges, ...others, [P.at(i)]: at, [P.all(i)]: 0, [P.sign(i)]: sign } });
  });
  return parts;
}

/** `Σ_i S_<i (to hi) ⋈ dS_i ⋈ S_>i (to lo)`, each source from its own start. */
function expandParts(
  order: readonly number[],
  startAfter: readonly number[],
  ranges: Readonly<Record<string, number>>,
  leftJoin: boolean,
): StepPart[] {
  const parts: StepPart[] = [];
  order.forEach((i, k) => {
    const lo = ranges[P.lo(i)] ?? 0;
    const hi = ranges[P.hi(i)] ?? 0;
    if (hi <= lo) return;
    const values: Record<string, number> = { ...ranges };
    order.forEach((j, m) => {
      if (m === k) return;
      values[P.lo(j)] = startAfter[j] ?? -1;
      values[P.hi(j)] = m < k ? (ranges[P.hi(j)] ?? 0) : (ranges[P.lo(j)] ?? 0);
    });
    parts.push({ values, ...(leftJoin && k > 0 ? { variant: 'inner' as const } : {}) });
  });
  return parts;
}

const NO_BOUND = (-(2n ** 63n) + 1n).toString();
const NO_UPPER_BOUND = (2n ** 63n - 1n).toString();

/** A nested query's table of a range join side is pruned once this many of its rows are dead. */
const PRUNE_MIN_ROWS = 64;

/**
 * Proton's range join over the stored sides (join-program.ts RangeJoin). Per step, one engine call
 * reads the largest bucket of each side's new rows and where each side's live rows start; the
 * watermarks then decide which new rows are late and which stored rows are still live:
 * left rows first (`dL ⋈ R_live`), then right rows (`L_live ⋈ dR`, dL included).
 */
class RangeJoinInputs implements StepInputs {
  private leftMark: bigint | undefined;
  private rightMark: bigint | undefined;
  private combined: bigint | undefined;
  /** Rows with `_tp_sn <= liveFrom` on a side can no longer match (pruned or before the start). */
  private liveFromLeft: number;
  private liveFromRight: number;
  /** Per side, the rows of its pruned nested-query table (join-program.ts RangeJoin.prune) end here. */
  private readonly prunedUpTo: [number, number] = [-1, -1];

  constructor(
    private readonly join: RangeJoin,
    startAfter: readonly number[],
    private readonly engine: Engine,
  ) {
    this.liveFromLeft = startAfter[join.left] ?? -1;
    this.liveFromRight = startAfter[join.right] ?? -1;
  }

  async parts(ranges: Readonly<Record<string, number>>): Promise<StepPart[]> {
    const { left, right, bucket } = this.join;
    const loL = ranges[P.lo(left)] ?? 0;
    const hiL = ranges[P.hi(left)] ?? 0;
    const loR = ranges[P.lo(right)] ?? 0;
    const hiR = ranges[P.hi(right)] ?? 0;
    if (hiL <= loL && hiR <= loR) return [];
    const c0 = this.combined;
    const info = await this.info(ranges, c0, loL, loR);

    if (info.leftMax !== undefined && (c0 === undefined || info.leftMax >= c0 - bucket))
      this.leftMark = max(this.leftMark, info.leftMax);
    const c1 = this.combine();
    if (info.rightMax !== undefined && (c1 === undefined || info.rightMax >= c1 - bucket))
      this.rightMark = max(this.rightMark, info.rightMax);
    this.combined = this.combine();

    const parts: StepPart[] = [];
    if (hiL > loL) {
      parts.push({
        values: {
          ...ranges,
          [P.lo(right)]: this.liveFromRight,
          [P.hi(right)]: loR,
          [JOIN_MIN_LEFT]: c0 === undefined ? NO_BOUND : (c0 - bucket).toString(),
          [JOIN_MIN_RIGHT]: c0 === undefined ? NO_BOUND : c0.toString(),
        },
      });
    }
    if (hiR > loR) {
      parts.push({
        values: {
          ...ranges,
          [P.lo(left)]: this.liveFromLeft,
          [P.hi(left)]: hiL,
          [JOIN_MIN_LEFT]: c1 === undefined ? NO_BOUND : c1.toString(),
          [JOIN_MIN_RIGHT]: c1 === undefined ? NO_BOUND : (c1 - bucket).toString(),
        },
        ...(this.join.leftJoin ? { variant: 'inner' as const } : {}),
      });
    }
    // Where the live rows start, as of the watermark before this step (still a safe bound).
    if (info.leftLive !== null) this.liveFromLeft = info.leftLive === undefined ? loL : info.leftLive - 1;
    if (info.rightLive !== null) this.liveFromRight = info.rightLive === undefined ? loR : info.rightLive - 1;
    await this.prune(0, this.liveFromLeft);
    await this.prune(1, this.liveFromRight);
    return parts;
  }

  /** Delete a nested query's rows that can no longer match (join-program.ts RangeJoin.prune). */
  private async prune(side: 0 | 1, liveFrom: number): Promise<void> {
    const table = this.join.prune?.[side];
    if (!table || liveFrom - this.prunedUpTo[side] < PRUNE_MIN_ROWS) return;
    await this.engine.query(
      `ALTER TABLE ${table} DELETE WHERE _tp_sn <= ${liveFrom} SETTINGS mutations_sync = 1`,
    );
    this.prunedUpTo[side] = liveFrom;
  }

  save(): unknown {
    const text = (b: bigint | undefined) => (b === undefined ? null : b.toString());
    return {
      leftMark: text(this.leftMark),
      rightMark: text(this.rightMark),
      combined: text(this.combined),
      liveFromLeft: this.liveFromLeft,
      liveFromRight: this.liveFromRight,
    };
  }

  restore(saved: unknown): void {
    const s = saved as Record<string, string | number | null>;
    const big = (v: string | number | null | undefined) =>
      v === null || v === undefined ? undefined : BigInt(v);
    this.leftMark = big(s.leftMark);
    this.rightMark = big(s.rightMark);
    this.combined = big(s.combined);
    this.liveFromLeft = Number(s.liveFromLeft);
    this.liveFromRight = Number(s.liveFromRight);
  }

  private combine(): bigint | undefined {
    if (this.leftMark === undefined || this.rightMark === undefined) return this.combined;
    // bigint: no Math.min / Math.max.
    const c = min(this.leftMark, this.rightMark);
    return max(this.combined, c);
  }

  /** Largest new bucket per side; first live sn per side (null: not computed this step). */
  private async info(
    ranges: Readonly<Record<string, number>>,
    c0: bigint | undefined,
    loL: number,
    loR: number,
  ): Promise<{
    leftMax?: bigint;
    rightMax?: bigint;
    leftLive: number | undefined | null;
    rightLive: number | undefined | null;
  }> {
    const { left, right } = this.join;
    const [maxL, maxR] = this.join.maxBucket;
    const [liveL, liveR] = this.join.liveSn;
    const live = (t: SqlTemplate | undefined, i: number, from: number, to: number, min: string) =>
      c0 === undefined || !t
        ? 'NULL'
        : `(${t.fill({ ...ranges, [P.lo(i)]: from, [P.hi(i)]: to, [JOIN_MIN_LEFT]: min, [JOIN_MIN_RIGHT]: min })})`;
    const sql = `SELECT (${maxL.fill(ranges)}), (${maxR.fill(ranges)}), ${live(liveL, left, this.liveFromLeft, loL, String(c0))}, ${live(liveR, right, this.liveFromRight, loR, String(c0))}`;
    const text = (await this.engine.query(sql, { format: 'JSONCompactEachRow' })).text();
    const row = JSON.parse(text.split('\n')[0] ?? '[]') as (string | null)[];
    const big = (v: string | null | undefined) =>
      v === null || v === undefined || v === '\\N' ? undefined : BigInt(v);
    const sn = (v: string | null | undefined, computed: boolean) =>
      !computed ? null : v === null || v === undefined || v === '\\N' ? undefined : Number(v);
    return {
      ...(big(row[0]) !== undefined ? { leftMax: big(row[0]) as bigint } : {}),
      ...(big(row[1]) !== undefined ? { rightMax: big(row[1]) as bigint } : {}),
      leftLive: sn(row[2], c0 !== undefined && liveL !== undefined),
      rightLive: sn(row[3], c0 !== undefined && liveR !== undefined),
    };
  }
}

function min(a: bigint, b: bigint): bigint {
  return b < a ? b : a;
}

function max(a: bigint | undefined, b: bigint): bigint {
  return a === undefined || b > a ? b : a;
}

/**
 * One statement answering the rows of all `selects` (undefined when there are none); `ordered`:
 * the rows of each select after those of the one before (a changelog's retractions first).
 */
export function unionOf(selects: readonly string[], ordered = false): string | undefined {
  if (selects.length <= 1) return selects[0];
  if (!ordered) return selects.map((s) => `SELECT * FROM (${s})`).join('\nUNION ALL\n');
  const union = selects.map((s, i) => `SELECT ${i} AS __trb_part, * FROM (${s})`).join('\nUNION ALL\n');
  return `SELECT * EXCEPT (__trb_part) FROM (${union}) ORDER BY __trb_part`;
}
