import type { DeliveryStats } from './delivery-writer.ts';

const KEEP_LINES = 1000;

/**
 * A sink's log for `GET /v1beta2/sinks/{id}/logs`: its lifecycle (started, stopped, restarted by
 * a change) and its deliveries' failures and recoveries, one line each (`<ISO time> <LEVEL>
 * <message>`), the last 1000 kept in memory (a restart starts a new log).
 */
export class SinkLog {
  private readonly lines: string[] = [];
  private failing = false;

  info(message: string, now = Date.now()): void {
    this.push('INFO', message, now);
  }

  warn(message: string, now = Date.now()): void {
    this.push('WARN', message, now);
  }

  /** The last `n` lines, oldest first. */
  tail(n: number): string[] {
    return n <= 0 ? [] : this.lines.slice(-n);
  }

  /** Counters that also log: each failure, and the first success after failures. */
  recording(stats: DeliveryStats): DeliveryStats {
    return {
      recordSuccess: (rows, bytes) => {
        stats.recordSuccess(rows, bytes);
        if (this.failing) this.info(`delivery recovered: ${rows} rows accepted`);
        this.failing = false;
      },
      recordFailure: (rows, message) => {
        stats.recordFailure(rows, message);
        this.failing = true;
        this.warn(`delivery of ${rows} rows failed (it will be retried): ${message}`);
      },
    };
  }

  private push(level: string, message: string, now: number): void {
    this.lines.push(`${new Date(now).toISOString()} ${level} ${message}`);
    if (this.lines.length > KEEP_LINES) this.lines.splice(0, this.lines.length - KEEP_LINES);
  }
}
