import { unionOf } from '../join-inputs.ts';
import { carryLiteral, carryMarker, keyedCarryLiteral } from '../lag-rewrite.ts';
import type { ResultSink } from '../result-sink.ts';
import { P } from '../sql-template.ts';
import type { ExecutionOutput } from './execution-output.ts';
import type { SavedState } from './saved-state.ts';
import { OperatorHooks, type StepArgs, type StepOperator } from './step-operator.ts';

/** Reads a step's SQL, possibly sharing the read with executions running the same SQL. */
export type TailRead = (sql: string, run: () => Promise<string>) => Promise<string>;

/**
 * A tail: each step's rows pass through the query's SQL and are emitted as they are. `lag()`
 * carries the last values of each lagged expression from step to step (per key with PARTITION BY).
 */
export class TailOperator extends OperatorHooks implements StepOperator {
  readonly emitsOnTick = false;
  /** Set per run: steps of executions running the same tail share each read (shared-step-reads.ts). */
  sharedRead: TailRead | undefined;
  /** lag(): the last values of each lagged expression, newest first. */
  private readonly carried: unknown[][] = [];
  /** The same per substream key, for lag() with PARTITION BY. */
  private readonly carriedByKey: Map<string, unknown[]>[] = [];

  constructor(private readonly out: ExecutionOutput) {
    super();
  }

  async step({ values, parts, sink }: StepArgs): Promise<boolean> {
    const p = this.out.program;
    const tail = p.tail!;
    const carries = p.lags ? this.carryValues(p.lags.depths) : {};
    const sql = unionOf(
      parts.map((part) =>
        ((part.variant && p.tailVariants?.[part.variant]) || tail).fill({
          ...part.values,
          ...carries,
          [P.emitVersion]: this.out.emitVersion,
          [P.emitted]: this.out.emitted,
        }),
      ),
      true,
    );
    if (sql !== undefined) {
      const engine = this.out.engine;
      const read = () => engine.query(sql, { settings: { max_threads: 1 } });
      const shared = this.sharedRead;
      const text = shared
        ? await this.out.timed('Tail', async () => {
            const t = await shared(sql, async () => (await read()).text());
            return { text: () => t };
          })
        : await this.out.timed('Tail', read);
      await this.out.output(this.out.rows(text), sink, p.changelog ? 'tail' : undefined);
    }
    if (p.lags) await this.carryForward(p.lags.carry.fill(values), p.lags.depths.length);
    return true;
  }

  async periodic(_sink: ResultSink): Promise<void> {}
  async timeout(_sink: ResultSink): Promise<void> {}

  save(): Partial<SavedState> {
    return { carried: this.carried, carriedByKey: this.carriedByKey.map((m) => [...m]) };
  }

  restore(saved: SavedState): void {
    saved.carried.forEach((values, i) => {
      this.carried[i] = values;
    });
    saved.carriedByKey.forEach((entries, i) => {
      this.carriedByKey[i] = new Map(entries);
    });
  }

  private carryValues(depths: readonly number[]): Record<string, string> {
    const keyed = this.out.program.lags?.keyed ?? false;
    return Object.fromEntries(
      depths.map((d, i) => [
        carryMarker(i),
        keyed
          ? keyedCarryLiteral(this.carriedByKey[i] ?? new Map(), d)
          : carryLiteral(this.carried[i] ?? [], d),
      ]),
    );
  }

  private async carryForward(sql: string, count: number): Promise<void> {
    const text = await this.out.timed('LagCarry', () => this.out.engine.query(sql));
    const rows = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown[]);
    if (rows.length === 0) return;
    const lags = this.out.program.lags;
    const depths = lags?.depths ?? [];
    if (lags?.keyed) {
      // Rows are newest first, at most `depth` per key; the key is the first column.
      for (let i = 0; i < count; i++) {
        const byKey = this.carriedByKey[i] ?? new Map<string, unknown[]>();
        this.carriedByKey[i] = byKey;
        const fresh = new Map<string, unknown[]>();
        for (const r of rows) {
          const key = String(r[0]);
          const list = fresh.get(key) ?? [];
          list.push(r[i + 1]);
          fresh.set(key, list);
        }
        for (const [key, newest] of fresh)
          byKey.set(key, [...newest, ...(byKey.get(key) ?? [])].slice(0, depths[i] ?? 1));
      }
      return;
    }
    for (let i = 0; i < count; i++) {
      const newest = rows.map((r) => r[i]);
      this.carried[i] = [...newest, ...(this.carried[i] ?? [])].slice(0, depths[i] ?? 1);
    }
  }
}
