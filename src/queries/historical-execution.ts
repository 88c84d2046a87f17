import type { Engine } from '../engine/engine.ts';
import type { ExecutionProgress, PipelineStep, ResultSink } from '../streaming/result-sink.ts';
import type { RowsPlan } from './execution.ts';
import { HISTORICAL_ENGINE_SETTINGS } from './historical-settings.ts';
import type { QueryAnalysis, ResultColumn } from './query-types.ts';
import { floatColumns, rowsFromLines, wideIntegerColumns } from './row-codec.ts';

/**
 * A bounded query: one engine statement whose result is streamed chunk by chunk into the sink.
 * It runs on the engine's `user` lane, so long historical queries never delay ingest.
 */
export class HistoricalExecution implements RowsPlan {
  readonly kind = 'rows';
  readonly streaming = false;
  private readonly stats: ExecutionProgress = { scannedRows: 0, scannedBytes: 0, lastEventTime: 0 };
  private status = 'pending';
  private elapsedNs = 0;

  constructor(
    private readonly engine: Engine,
    /** The ClickHouse SQL to run. */
    readonly engineSql: string,
    readonly header: ResultColumn[],
    readonly analysis: QueryAnalysis,
    private readonly timeoutMs?: number,
  ) {}

  async run(sink: ResultSink, signal: AbortSignal): Promise<void> {
    const wide = wideIntegerColumns(this.header);
    const floats = floatColumns(this.header);
    const started = process.hrtime.bigint();
    this.status = 'running';
    try {
      for await (const chunk of this.engine.stream(this.engineSql, {
        settings: HISTORICAL_ENGINE_SETTINGS,
        lane: 'user',
        userSql: true,
        signal,
        ...(this.timeoutMs ? { timeoutMs: this.timeoutMs } : {}),
      })) {
        const text = chunk.text();
        this.stats.scannedRows += chunk.rows;
        this.stats.scannedBytes += text.length;
        await sink.rows(rowsFromLines(text, wide, floats));
      }
      this.status = 'finished';
    } catch (e) {
      this.status = 'failed';
      throw e;
    } finally {
      this.elapsedNs = Number(process.hrtime.bigint() - started);
    }
  }

  progress(): ExecutionProgress {
    return { ...this.stats };
  }

  pipeline(): PipelineStep[] {
    return [
      {
        id: 0,
        name: 'HistoricalQuery',
        status: this.status,
        processedBytes: this.stats.scannedBytes,
        processingTimeNs: this.elapsedNs,
        inputs: [],
      },
    ];
  }
}
