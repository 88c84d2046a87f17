import type { DeliveryStats } from '../../connectors/sinks/delivery-writer.ts';

const MINUTE = 60_000;
const WINDOW_MINUTES = 30;

/** ExternalStreamStats of the contract: averages over the last 30 minutes. */
export interface ExternalStreamStatsBody {
  read_bps: number;
  read_eps: number;
  written_bps: number;
  written_eps: number;
}

/**
 * What was written into one external stream (by INSERT INTO and the views INTO it), per minute,
 * for the stats route; failed attempts are not counted. Kept in memory (a restart starts at zero).
 */
export class ExternalStreamCounters implements DeliveryStats {
  private readonly minutes = new Map<number, { rows: number; bytes: number }>();

  recordSuccess(rows: number, bytes: number, now = Date.now()): void {
    const m = Math.floor(now / MINUTE) * MINUTE;
    const c = this.minutes.get(m) ?? { rows: 0, bytes: 0 };
    c.rows += rows;
    c.bytes += bytes;
    this.minutes.set(m, c);
    for (const k of this.minutes.keys()) if (k < m - WINDOW_MINUTES * MINUTE) this.minutes.delete(k);
  }

  recordFailure(): void {}

  /** Rows and bytes per second over the last 30 minutes (as `written_*`; reads use a counter of their own). */
  snapshot(now = Date.now()): ExternalStreamStatsBody {
    let rows = 0;
    let bytes = 0;
    for (const [m, c] of this.minutes)
      if (m >= now - WINDOW_MINUTES * MINUTE) {
        rows += c.rows;
        bytes += c.bytes;
      }
    const seconds = WINDOW_MINUTES * 60;
    return { read_bps: 0, read_eps: 0, written_bps: bytes / seconds, written_eps: rows / seconds };
  }
}
