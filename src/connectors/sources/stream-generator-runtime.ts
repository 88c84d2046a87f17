import { templateEvent } from './generator-templates.ts';
import type { StreamGeneratorProperties } from './source-properties.ts';
import type { SourceRuntime, SourceWriter } from './source-runtime.ts';

const TICK_MS = 100;

/**
 * A running `stream_generator`: every 100 ms it writes the events due by then (eps × time since
 * start) in one ingest call. A failed write counts the events as failures, is logged in the stats,
 * and the next tick tries again (the events due keep accumulating up to one second's worth).
 */
export class StreamGeneratorRuntime implements SourceRuntime {
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private written = 0;
  private busy = false;
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly properties: StreamGeneratorProperties,
    private readonly writer: SourceWriter,
  ) {}

  start(): void {
    this.startedAt = Date.now();
    this.written = 0;
    this.timer = setInterval(() => this.run(), TICK_MS);
    this.timer.unref?.();
    this.run();
  }

  /** Stop; resolves once a write in flight has finished (nothing is written after). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.inflight;
  }

  private run(): void {
    if (this.busy) return;
    this.inflight = this.tick();
  }

  private async tick(): Promise<void> {
    if (this.busy || !this.timer) return;
    const { eps, template } = this.properties;
    const target = Math.floor((eps * (Date.now() - this.startedAt)) / 1000) + 1;
    let due = target - this.written;
    const cap = Math.max(1, Math.ceil(eps));
    if (due > cap) {
      this.written = target - cap;
      due = cap;
    }
    if (due <= 0) return;
    this.busy = true;
    try {
      const events = Array.from({ length: due }, () => templateEvent(template));
      await this.writer.write(events);
      this.written += due;
    } catch {
      // recorded by the writer; retried next tick
    } finally {
      this.busy = false;
    }
  }
}
