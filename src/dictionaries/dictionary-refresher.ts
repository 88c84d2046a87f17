import type { Logger } from '../log/logger.ts';
import type { DictionaryLifetime } from '../sql/translator/dictionary-ddl.ts';

/** The least time between two reloads of one dictionary, whatever its LIFETIME says. */
const MIN_INTERVAL_MS = 1000;

/**
 * The LIFETIME schedule: each dictionary with a LIFETIME above 0 is reloaded after a delay drawn
 * uniformly from [MIN, MAX] seconds (as the engine's own updater spreads reloads), again and again.
 * The embedded engine runs no updater of its own, so Tributary does. A failed reload is logged and
 * the dictionary keeps the data it had; the next one is scheduled all the same.
 */
export class DictionaryRefresher {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Dictionaries with a schedule (a reload in flight included). */
  private readonly live = new Set<string>();
  private closed = false;

  constructor(
    private readonly reload: (db: string, name: string) => Promise<void>,
    private readonly logger?: Logger,
  ) {}

  schedule(d: { db: string; name: string; lifetime: DictionaryLifetime }): void {
    this.cancel(d.db, d.name);
    if (this.closed || d.lifetime.max <= 0) return;
    const key = `${d.db}.${d.name}`;
    const { min, max } = d.lifetime;
    const delay = Math.max(MIN_INTERVAL_MS, (min + Math.random() * (max - min)) * 1000);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.reload(d.db, d.name)
        .catch((e: unknown) => {
          this.logger?.warn({ dictionary: key, err: (e as Error).message }, 'dictionary reload failed');
        })
        .finally(() => {
          // Dropped or re-created meanwhile: its own schedule (or none) is in place.
          if (!this.timers.has(key) && this.live.has(key)) this.schedule(d);
        });
    }, delay);
    timer.unref();
    this.timers.set(key, timer);
    this.live.add(key);
  }

  cancel(db: string, name: string): void {
    const key = `${db}.${name}`;
    const t = this.timers.get(key);
    if (t) clearTimeout(t);
    this.timers.delete(key);
    this.live.delete(key);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.live.clear();
  }
}
