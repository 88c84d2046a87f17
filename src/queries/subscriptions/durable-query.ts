import type { DurablePlan } from '../../streaming/durable-plan.ts';
import type { ExecutionProgress, PipelineStep, ResultSink } from '../../streaming/result-sink.ts';
import type { RowsPlan } from '../execution.ts';
import type { QueryAnalysis, ResultColumn } from '../query-types.ts';
import type { Subscriptions } from './subscriptions.ts';

/**
 * A subscribed query (SUBSCRIBE TO, RECOVER FROM): a streaming execution run durably under the
 * query id that owns its checkpoints. It resumes from its checkpoint, and a clean stop (cancel,
 * disconnect, server shutdown) saves one.
 */
export class DurableQuery implements RowsPlan {
  readonly kind = 'rows';
  readonly streaming = true;
  readonly header: ResultColumn[];
  readonly analysis: QueryAnalysis;

  constructor(
    readonly queryId: string,
    private readonly execution: DurablePlan,
    private readonly subscriptions: Subscriptions,
    private readonly checkpointIntervalMs: number,
  ) {
    this.header = execution.header;
    this.analysis = execution.analysis;
  }

  async run(sink: ResultSink, signal: AbortSignal): Promise<void> {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal.addEventListener('abort', onAbort);
    let done: Promise<void> = Promise.resolve();
    const stop = async () => {
      controller.abort();
      await done.catch(() => undefined);
    };
    this.subscriptions.started(this.queryId, stop);
    try {
      if (signal.aborted) controller.abort();
      done = this.execution.run(sink, controller.signal, {
        store: this.subscriptions.store(this.queryId),
        checkpointIntervalMs: this.checkpointIntervalMs,
      });
      await done;
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.subscriptions.ended(this.queryId, stop);
    }
  }

  progress(): ExecutionProgress {
    return this.execution.progress();
  }

  pipeline(): PipelineStep[] {
    return this.execution.pipeline();
  }

  dispose(): Promise<void> {
    return this.execution.dispose();
  }
}
