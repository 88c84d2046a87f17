import { isLosslessNumber, parse, stringify } from 'lossless-json';
import type { Engine } from '../../engine/engine.ts';
import { floatColumns, rowsFromLines, wideIntegerColumns } from '../../queries/row-codec.ts';
import type { ExecutionProgress, PipelineStep, ResultSink } from '../result-sink.ts';
import type { StreamingProgram } from '../streaming-program.ts';

interface StepStats {
  name: string;
  calls: number;
  ns: number;
  bytes: number;
}

/**
 * What the operators of one streaming execution share (step-operator.ts): the engine their steps
 * run on, the program, the emitted-row count and emit version, the last row emitted per group for
 * EMIT CHANGELOG, and the per-step timings the query pipeline shows.
 */
export class ExecutionOutput {
  /** Rows handed to the sink so far (LIMIT, `emitted` in a tail's SQL). */
  emitted = 0;
  /** Emits with rows so far (emit_version()). */
  emitVersion = 0;
  /** Last emitted row per group, for EMIT CHANGELOG retractions. */
  readonly lastEmitted = new Map<string, unknown[]>();
  readonly progress: ExecutionProgress = { scannedRows: 0, scannedBytes: 0, lastEventTime: 0 };
  private readonly steps = new Map<string, StepStats>();
  private readonly wide: number[];
  /** Float columns, whose `-nan` prints as `nan` (as Proton prints it). */
  private readonly floats: number[];

  constructor(
    /** The engine, each statement holding the flush locks of the streams the query reads. */
    readonly engine: Engine,
    readonly program: StreamingProgram,
  ) {
    this.wide = wideIntegerColumns(program.header);
    this.floats = floatColumns(program.header);
  }

  /** Engine output lines as result rows (wide integers and floats printed as Proton prints them). */
  rows(text: string): string[] {
    return rowsFromLines(text, this.wide, this.floats);
  }

  /** ` LIMIT n` for what the query's LIMIT still allows, or nothing. */
  limitClause(): string {
    const limit = this.program.limit;
    return limit === undefined ? '' : `\nLIMIT ${Math.max(limit - this.emitted, 0)}`;
  }

  limitReached(): boolean {
    return this.program.limit !== undefined && this.emitted >= this.program.limit;
  }

  /** Hand rows to the sink, adding `_tp_delta` for EMIT CHANGELOG and honouring LIMIT. */
  async output(
    rows: string[],
    sink: ResultSink,
    changelog: 'tail' | 'aggregate' | undefined,
    gone: readonly string[] = [],
  ): Promise<void> {
    let out = rows;
    const at = this.program.changelog?.deltaIndex;
    if (changelog === 'tail' && at !== undefined) {
      out = rows.map((r) => {
        const row = parse(r) as unknown[];
        row.splice(at, 0, 1);
        return stringify(row) ?? r;
      });
    } else if (changelog === 'aggregate' && at !== undefined) {
      out = [];
      for (const key of gone) {
        const previous = this.lastEmitted.get(key);
        if (!previous) continue;
        const retract = [...previous];
        retract.splice(at, 0, -1);
        out.push(stringify(retract) ?? '');
        this.lastEmitted.delete(key);
      }
      for (const r of rows) {
        const row = parse(r) as unknown[];
        const gk = row.pop();
        const key = isLosslessNumber(gk) ? gk.toString() : String(gk);
        const previous = this.lastEmitted.get(key);
        if (previous) {
          const retract = [...previous];
          retract.splice(at, 0, -1);
          out.push(stringify(retract) ?? '');
        }
        this.lastEmitted.set(key, row);
        const add = [...row];
        add.splice(at, 0, 1);
        out.push(stringify(add) ?? '');
      }
    }
    if (this.program.limit !== undefined) out = out.slice(0, Math.max(this.program.limit - this.emitted, 0));
    if (out.length === 0) return;
    this.emitted += out.length;
    await sink.rows(out);
  }

  /** Run one engine call of a step, counting its time and output for the query pipeline. */
  async timed(name: string, fn: () => Promise<unknown>): Promise<string> {
    const started = process.hrtime.bigint();
    const r = (await fn()) as { text?: () => string } | undefined;
    const text = typeof r?.text === 'function' ? r.text() : '';
    const s = this.steps.get(name) ?? { name, calls: 0, ns: 0, bytes: 0 };
    s.calls++;
    s.ns += Number(process.hrtime.bigint() - started);
    s.bytes += text.length;
    this.steps.set(name, s);
    this.progress.scannedBytes += text.length;
    return text;
  }

  /** Engine calls per step name so far. */
  stepCalls(): Record<string, number> {
    return Object.fromEntries([...this.steps.values()].map((s) => [s.name, s.calls]));
  }

  /** The steps in order as pipeline nodes, numbered from `first`, the first fed by `sources`. */
  pipelineSteps(first: number, sources: readonly number[], status: string): PipelineStep[] {
    return [...this.steps.values()].map((s, i) => ({
      id: first + i,
      name: s.name,
      status,
      processedBytes: s.bytes,
      processingTimeNs: s.ns,
      inputs: i === 0 ? [...sources] : [first + i - 1],
    }));
  }

  /** What a checkpoint keeps of it. */
  save(): {
    emitted: number;
    emitVersion: number;
    lastEmitted: Array<[string, string]>;
    lastEventTime: number;
  } {
    return {
      emitted: this.emitted,
      emitVersion: this.emitVersion,
      lastEmitted: [...this.lastEmitted].map(([k, row]) => [k, stringify(row) ?? '[]']),
      lastEventTime: this.progress.lastEventTime,
    };
  }

  restore(saved: ReturnType<ExecutionOutput['save']>): void {
    this.emitted = saved.emitted;
    this.emitVersion = saved.emitVersion;
    for (const [k, row] of saved.lastEmitted) this.lastEmitted.set(k, parse(row) as unknown[]);
    this.progress.lastEventTime = saved.lastEventTime;
  }
}
