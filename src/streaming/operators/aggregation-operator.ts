import { parse, stringify } from 'lossless-json';
import { quoteString } from '../../engine/settings-clause.ts';
import { unionOf } from '../join-inputs.ts';
import type { ResultSink } from '../result-sink.ts';
import { ShardWatermarks } from '../shard-watermarks.ts';
import { P, type SqlTemplate } from '../sql-template.ts';
import { StateTable } from '../state-table.ts';
import { SubstreamWatermarks } from '../substream-watermarks.ts';
import { millisFromNanos } from '../window-time.ts';
import type { ExecutionOutput } from './execution-output.ts';
import type { SavedState } from './saved-state.ts';
import type { StepArgs, StepOperator } from './step-operator.ts';

/** Compact the state table after this many folds. */
const COMPACT_EVERY = 64;

/**
 * An aggregation, global or windowed (tumble, hop): each step folds its rows into partial
 * aggregate states in an engine table (state-table.ts); emits finalize the groups the policy
 * says (changed ones, closed windows, all on a tick). A window's watermark is kept per
 * substream (substream-watermarks.ts) and moves insert by insert.
 */
export class AggregationOperator implements StepOperator {
  readonly emitsOnTick = true;
  /** The windows' watermarks; undefined for a global aggregation. */
  readonly watermark: SubstreamWatermarks | ShardWatermarks | undefined;
  private readonly state: StateTable;
  /** Folds so far; each state row carries the batch that folded it (`__batch`). */
  private batch = 0;
  private lastEmittedBatch = 0;
  /** Next emit version per substream (emit_version() of windows and substreams). */
  private readonly versionBases = new Map<string, number>();

  constructor(private readonly out: ExecutionOutput) {
    const w = out.program.aggregation!.window;
    this.watermark = !w
      ? undefined
      : w.shards !== undefined
        ? new ShardWatermarks(w.shape, w.delay, w.shards.count)
        : new SubstreamWatermarks(w.shape, w.delay);
    this.state = new StateTable(out.engine, 'q');
  }

  private get agg() {
    return this.out.program.aggregation!;
  }

  async open(): Promise<void> {
    await this.state.create(this.agg.emptyFold);
  }

  async step({ values, parts, sink, backfill, cuts }: StepArgs): Promise<boolean> {
    const agg = this.agg;
    const state = this.state;
    // A join step with nothing to fold (e.g. only versioned_kv updates) changes no group.
    const joined = this.out.program.join !== undefined;
    // A retracting aggregation whose rows were all filtered out changed nothing: no emit for it.
    const counted = joined || agg.split.argumentColumns !== undefined;
    if (parts.length === 0) return false;
    let folded = true;
    const foldSql = (fills: Record<string, string | number>) => {
      const sql = unionOf(parts.map((part) => agg.fold.fill({ ...part.values, ...fills }))) as string;
      // An empty join output folds nothing, not a keyless aggregate's row of zeros.
      return counted ? `SELECT * FROM (${sql}) SETTINGS empty_result_for_aggregation_by_empty_set = 1` : sql;
    };
    const policy = this.out.program.policy;
    const batch = ++this.batch;
    let advanced = false;
    if (agg.window && this.watermark) {
      const window = agg.window;
      // Rows older than their substream's watermark in force before this batch are late (dropped);
      // during a backfill the watermark is muted (Proton's processWithMutedWatermark). The same
      // engine call folds the batch and reads its largest event time per substream.
      const noFilter = `toInt64(${-(2n ** 63n) + 1n})`;
      const byInsert = !backfill && cuts.length > 0 ? window.insertLate : undefined;
      // Several shards: each row against its own shard's watermark, in the range read.
      const byShard = !backfill && !byInsert ? window.shards : undefined;
      const wm = backfill || byInsert || byShard ? noFilter : this.watermark.lookupSql(window.sourceKeySql);
      const late = byInsert
        ? `${byInsert.timeNsSql} >= ${await this.insertWatermarksSql(byInsert.maxTime, window.sourceKeySql, values, cuts)}`
        : byShard
          ? `${byShard.timeNsSql} >= ${this.watermark.lookupSql(window.sourceKeySql)}`
          : 1;
      const fold = foldSql({ [P.watermark]: wm, [P.late]: late, [P.batch]: batch });
      const maxText = await this.out.timed('Aggregate', () =>
        state.append(fold, window.maxTime.fill(values)),
      );
      const maxima = new Map<string, bigint>();
      for (const line of maxText.split('\n')) {
        if (!line) continue;
        const [key, max] = JSON.parse(line) as [string, string];
        maxima.set(key, BigInt(max));
      }
      advanced = this.watermark.observe(maxima);
      const maxNs = this.watermark.maxEventTime();
      if (maxNs !== undefined) this.out.progress.lastEventTime = millisFromNanos(maxNs);
    } else {
      const text = await this.out.timed('Aggregate', () =>
        state.append(
          foldSql({ [P.watermark]: 0, [P.batch]: batch }),
          counted ? `SELECT count() FROM ${state.name} WHERE __batch = ${batch}` : undefined,
        ),
      );
      if (counted && !/[1-9]/.test(text)) folded = false;
    }
    if (state.appendsSinceCompact >= COMPACT_EVERY)
      await this.out.timed('Compact', () => state.compact(agg.compact));
    if (backfill) return folded;

    if (policy.shape === 'global' && policy.onUpdate && !policy.periodicMs) {
      await this.emit(sink, this.changedGroups(batch));
    } else if (policy.shape === 'window') {
      if (policy.onUpdate && !policy.periodicMs) {
        const open = `NOT (${this.closedWindows()})`;
        await this.emit(sink, `${this.changedGroups(batch)} AND ${open}`);
      }
      if (advanced && !policy.periodicMs) {
        // ON UPDATE sent each window's changes already; a closing window is not sent again.
        if (policy.onUpdate) this.deleteClosedWindows();
        else await this.emitClosedWindows(sink);
      }
    }
    return folded;
  }

  async backfillEnd(sink: ResultSink): Promise<void> {
    const policy = this.out.program.policy;
    if (policy.shape === 'window' && !policy.periodicMs) {
      if (this.watermark?.any) await this.emitClosedWindows(sink);
    } else if (policy.shape === 'global' && policy.onUpdate && !policy.periodicMs) {
      await this.emit(sink, '1');
    }
  }

  /** PERIODIC tick with new data: the current result (global), or open windows' intermediate results and closed windows. */
  async periodic(sink: ResultSink): Promise<void> {
    const policy = this.out.program.policy;
    // ON UPDATE and CHANGELOG send only the groups changed since the last emit.
    const changedOnly = policy.shape !== 'tail' && (policy.onUpdate || policy.changelog);
    let filter = changedOnly ? this.changedGroups(this.batch, true) : '1';
    if (policy.shape === 'global') {
      // Substreams (PARTITION BY) are finalized one by one, each only when it got rows since the
      // last emit (Proton's GlobalAggregatingTransformWithSubstream::finalize).
      if (!changedOnly) filter = this.changedSubstreams() ?? filter;
      await this.emit(sink, filter);
      return;
    }
    if (policy.shape === 'window') {
      await this.emit(sink, filter);
      this.deleteClosedWindows();
    }
  }

  /** EMIT ... TIMEOUT: every open window is final. */
  async timeout(sink: ResultSink): Promise<void> {
    if (!this.watermark?.timeout()) return;
    await this.emit(sink, '1');
    this.state.delete('1');
  }

  async beforeCheckpoint(): Promise<void> {
    const agg = this.agg;
    // serialized JavaScript aggregate states: the checkpoint keeps them, not the values since
    if (agg.compactBeforeCheckpoint && this.state.appendsSinceCompact > 0)
      await this.state.compact(agg.compact);
    await this.state.flushDeletes();
  }

  tables(): Record<string, string> {
    return { state: this.state.name };
  }

  async restoreTables(tables: Readonly<Record<string, string>>): Promise<void> {
    if (tables.state) await this.state.restore(tables.state);
  }

  async close(): Promise<void> {
    await this.state.drop().catch(() => undefined);
  }

  save(): Partial<SavedState> {
    return {
      batch: this.batch,
      lastEmittedBatch: this.lastEmittedBatch,
      watermarks: this.watermark?.save() ?? [],
      versionBases: [...this.versionBases],
    };
  }

  restore(saved: SavedState): void {
    this.batch = saved.batch;
    this.lastEmittedBatch = saved.lastEmittedBatch;
    this.watermark?.restore(saved.watermarks);
    for (const [k, v] of saved.versionBases) this.versionBases.set(k, v);
  }

  /**
   * The late filter of a step over several inserts of one stream: each row is judged against the
   * watermark the inserts before its own left, as when each insert is its own step (Proton
   * stamps watermarks block by block). One engine call reads each insert's largest event time per
   * substream; the watermarks in force before each insert are then computed here.
   */
  private async insertWatermarksSql(
    insertMaxTime: SqlTemplate,
    keySql: string,
    values: Record<string, number>,
    cuts: readonly number[],
  ): Promise<string> {
    const insertOf = `multiIf(${cuts.map((end, i) => `_tp_sn <= ${end}, ${i + 1}`).join(', ')}, ${cuts.length + 1})`;
    const text = await this.out.timed('Aggregate', () =>
      this.out.engine.query(insertMaxTime.fill({ ...values, [P.commit]: insertOf })),
    );
    const byInsert = new Map<number, Map<string, bigint>>();
    for (const line of text.split('\n')) {
      if (!line) continue;
      const [key, insert, max] = JSON.parse(line) as [string, number | string, string];
      const n = Number(insert);
      const m = byInsert.get(n) ?? new Map<string, bigint>();
      byInsert.set(n, m);
      m.set(key, BigInt(max));
    }
    const progress = this.watermark!.copy();
    const branches: string[] = [];
    cuts.forEach((end, i) => {
      branches.push(`_tp_sn <= ${end}`, progress.lookupSql(keySql));
      const maxima = byInsert.get(i + 1);
      if (maxima) progress.observe(maxima);
    });
    return `multiIf(${branches.join(', ')}, ${progress.lookupSql(keySql)})`;
  }

  private async emitClosedWindows(sink: ResultSink): Promise<void> {
    await this.emit(sink, this.closedWindows());
    this.deleteClosedWindows();
  }

  private deleteClosedWindows(): void {
    if (!this.watermark?.any) return;
    this.state.delete(this.closedWindows());
  }

  /** State rows of windows that ended at or before their substream's watermark. */
  private closedWindows(): string {
    const window = this.agg.window!;
    const end = this.agg.split.windowEnd;
    return `${end} <= fromUnixTimestamp64Nano(${this.watermark!.closingSql(window.stateKeySql)})`;
  }

  /** Groups with rows folded in batch `batch` (or since the last emit). */
  private changedGroups(batch: number, sinceLastEmit = false): string {
    const cond = sinceLastEmit ? `__batch > ${this.lastEmittedBatch}` : `__batch = ${batch}`;
    return changedRows(this.state, this.agg.split.keyColumns, cond);
  }

  /** State rows of the substreams (PARTITION BY keys) with rows since the last emit; undefined without substreams. */
  private changedSubstreams(): string | undefined {
    const keys = this.agg.split.partitionColumns;
    if (keys.length === 0) return undefined;
    return changedRows(this.state, keys, `__batch > ${this.lastEmittedBatch}`);
  }

  private async emit(sink: ResultSink, filter: string): Promise<void> {
    const agg = this.agg;
    const state = this.state;
    const sql =
      agg.emit.fill({
        __TRB_STATE__: state.name,
        [P.emitFilter]: filter,
        // the batch being emitted (JavaScript aggregates with their own emit process its values)
        [P.batch]: this.batch,
        [P.emitVersion]: this.out.emitVersion,
        ...this.versionArrays(),
      }) + this.out.limitClause();
    const text = await this.out.timed('Emit', () => state.select(sql));
    this.lastEmittedBatch = this.batch;
    let rows = this.out.rows(text);
    // EMIT CHANGELOG of a retracting aggregation: groups left with no rows retract their last row.
    const gone = agg.goneGroups
      ? (
          await this.out.timed('Emit', () =>
            state.select(agg.goneGroups!.fill({ __TRB_STATE__: state.name, [P.emitFilter]: filter })),
          )
        )
          .split('\n')
          .filter(Boolean)
          .map((line) => String((JSON.parse(line) as unknown[])[0]))
      : [];
    if (rows.length === 0 && !gone.some((key) => this.out.lastEmitted.has(key))) return;
    if (agg.versioned) rows = this.takeVersions(rows);
    this.out.emitVersion++;
    await this.out.output(rows, sink, this.out.program.changelog ? 'aggregate' : undefined, gone);
  }

  private versionArrays(): Record<string, string> {
    if (this.versionBases.size === 0) return { [P.versionKeys]: "['']", [P.versionBases]: '[toUInt64(0)]' };
    const entries = [...this.versionBases];
    return {
      [P.versionKeys]: `[${entries.map(([k]) => quoteString(k)).join(', ')}]`,
      [P.versionBases]: `[${entries.map(([, v]) => `toUInt64(${v})`).join(', ')}]`,
    };
  }

  /** Strip the trailing `[substream key, version]` of emitted rows, advancing each substream's version. */
  private takeVersions(rows: string[]): string[] {
    return rows.map((line) => {
      const row = parse(line) as unknown[];
      const version = Number(String(row.pop()));
      const key = String(row.pop());
      this.versionBases.set(key, Math.max(this.versionBases.get(key) ?? 0, version + 1));
      return stringify(row) ?? line;
    });
  }
}

/** State rows whose `keys` have a row matching `cond` (any row at all when there are no keys). */
function changedRows(state: StateTable, keys: readonly string[], cond: string): string {
  if (keys.length === 0) return `(SELECT count() FROM ${state.name} WHERE ${cond}) > 0`;
  return `(${keys.join(', ')}) IN (SELECT ${keys.join(', ')} FROM ${state.name} WHERE ${cond})`;
}
