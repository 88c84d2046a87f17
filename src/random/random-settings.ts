import { err } from '../errors/tributary-error.ts';

/**
 * The SETTINGS of `CREATE RANDOM STREAM`, as Proton's StorageRandom takes them:
 * - `eps`: events generated per second (default 1000; fractions allowed, `eps=0.5` is one event
 *   every 2 s; below 0.00001 it is 0, which means "as fast as possible");
 * - `interval_time`: how often a batch is generated, in ms, 1 to 1000 (default 100): eps=1000 with
 *   interval_time=200 makes 200 rows every 200 ms;
 * - `shards`: one generator makes the rows of every shard in turn (`_tp_shard`, random-batch-sql.ts).
 */
export interface RandomSettings {
  readonly eps: number;
  readonly intervalTimeMs: number;
  readonly shards: number;
}

export const RANDOM_DEFAULTS: RandomSettings = { eps: 1000, intervalTimeMs: 100, shards: 1 };

const KNOWN = ['eps', 'interval_time', 'shards'] as const;

function numberOf(name: string, value: string | number | boolean): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (typeof value === 'boolean' || !Number.isFinite(n))
    throw err('INVALID_SETTING_VALUE', { name, detail: `expected a number, got ${String(value)}` });
  return n;
}

/** Parse and check the settings of CREATE RANDOM STREAM (names case-insensitive). */
export function randomSettings(raw: Readonly<Record<string, string | number | boolean>>): RandomSettings {
  let { eps, intervalTimeMs, shards } = RANDOM_DEFAULTS;
  for (const [key, value] of Object.entries(raw)) {
    const name = key.toLowerCase();
    if (name === 'eps') {
      eps = numberOf(key, value);
      if (eps < 0) throw err('INVALID_SETTING_VALUE', { name: key, detail: 'eps cannot be negative' });
      if (eps < 0.00001) eps = 0;
    } else if (name === 'interval_time') {
      intervalTimeMs = numberOf(key, value);
      if (!Number.isInteger(intervalTimeMs) || intervalTimeMs <= 0 || intervalTimeMs > 1000)
        throw err('INVALID_SETTING_VALUE', {
          name: key,
          detail: `interval_time is in milliseconds, an integer from 1 to 1000; got ${String(value)}`,
        });
    } else if (name === 'shards') {
      shards = numberOf(key, value);
      if (!Number.isInteger(shards) || shards < 1)
        throw err('INVALID_SETTING_VALUE', { name: key, detail: 'shards is an integer of at least 1' });
    } else {
      throw err('UNKNOWN_SETTING', { name: key, hint: ` for a random stream (known: ${KNOWN.join(', ')})` });
    }
  }
  return { eps, intervalTimeMs, shards };
}

/**
 * Rows of a historical read (`table(s)`): `max_events` when the query sets it, else one second's
 * worth (`eps`), else (eps = 0) 65,536, as Proton answers.
 */
export function historicalBatchSize(settings: RandomSettings, maxEvents?: number): number {
  if (maxEvents !== undefined && maxEvents > 0) return Math.floor(maxEvents);
  if (settings.eps > 0) return Math.max(1, Math.floor(settings.eps));
  return 65536;
}
