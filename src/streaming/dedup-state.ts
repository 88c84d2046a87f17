import { randomUUID } from 'node:crypto';
import type { Engine } from '../engine/engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import type { DedupCall } from '../sql/translator/translate.ts';
import { SqlTemplate } from './sql-template.ts';
import { STATE_DB } from './state-table.ts';
import { intervalMillis, intervalOf } from './window-interval.ts';

/** Keys a dedup() keeps when the call gives no limit (streaming-sql-notes.md §1.12 table). */
export const DEFAULT_DEDUP_LIMIT = 100_000;

/** One dedup() of a streaming query: the table of keys seen and the statements that keep it. */
export interface DedupProgram {
  /** `_tributary_state.dd_<id>`: `(h FixedString(16), sn Int64, t DateTime64(3))`, one row per admitted key. */
  readonly table: string;
  readonly create: string;
  /**
   * Run before each step over the same ranges: records every key of the range that is not among
   * the keys still kept, with the sequence number of its first row (`__TRB_LO_i__`/`__TRB_HI_i__`).
   */
  readonly admit: SqlTemplate;
  /** Deletes the rows of keys no longer kept (beyond the limit or the TTL). */
  readonly prune: string;
}

/**
 * Streaming dedup(s, keys...[, ttl][, limit]), as Proton's DedupTransform: a row passes when its
 * key (a 128-bit SipHash of the key columns) is not among the keys kept; at the start of each
 * step the keys kept are the newest `limit` (default 100,000) admitted within the TTL (none by
 * default; 0 is none), oldest dropped first.
 *
 * All in the engine, so a dedup can sit under a window or an aggregation: before a step, `admit`
 * inserts each new key of the range with its first row's `_tp_sn`; the step then reads the range
 * through `(SELECT ... WHERE (key hash, _tp_sn) IN keys table)`, which keeps exactly those first
 * rows. The planner collects one DedupState per query; the translator calls `source` for every
 * dedup() over a range read (others keep the historical form: first row per key of what is read).
 */
export class DedupStates {
  private readonly byCall = new Map<string, DedupProgram>();
  private readonly created = new Set<string>();

  /** The `streamingDedup` hook of the translator. `isRange` tells a range read from other sources. */
  hook(isRange: (sql: string) => boolean): (call: DedupCall) => string | undefined {
    return (call) => (isRange(call.source.sql) ? this.source(call) : undefined);
  }

  get programs(): DedupProgram[] {
    return [...this.byCall.values()];
  }

  /** Create the key tables planned so far (before the step SQL is described or run). */
  async create(engine: Engine): Promise<void> {
    for (const d of this.byCall.values()) {
      if (this.created.has(d.table)) continue;
      await engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(STATE_DB)}`);
      await engine.query(d.create);
      this.created.add(d.table);
    }
  }

  private source(call: DedupCall): string {
    const hash = `sipHash128(${call.keys.join(', ')})`;
    const ttlMs = call.ttl ? intervalMillis(intervalOf(call.ttl, 'the dedup() timeout')) : 0;
    const limit = call.limit ?? DEFAULT_DEDUP_LIMIT;
    const memo = JSON.stringify([call.source.sql, hash, ttlMs, limit]);
    let d = this.byCall.get(memo);
    if (!d) {
      const table = `${STATE_DB}.dd_${randomUUID().replaceAll('-', '')}`;
      const kept = keptKeys(table, ttlMs, limit);
      d = {
        table,
        create: `CREATE TABLE ${table} (h FixedString(16), sn Int64, t DateTime64(3)) ENGINE = Memory`,
        admit: new SqlTemplate(
          `INSERT INTO ${table} (h, sn, t) SELECT ${hash} AS __h, min(_tp_sn), now64(3) FROM ${call.source.sql} ` +
            `WHERE __h NOT IN (SELECT h FROM (${kept})) GROUP BY __h`,
        ),
        prune: `ALTER TABLE ${table} DELETE WHERE (h, sn) NOT IN (SELECT h, sn FROM (${kept}))`,
      };
      this.byCall.set(memo, d);
    }
    return `(SELECT ${call.source.star} FROM ${call.source.sql} WHERE (${hash}, _tp_sn) IN (SELECT h, sn FROM ${d.table}))`;
  }
}

/** The keys still kept: the newest `limit` (0: all) admitted within `ttlMs` (0: forever). */
function keptKeys(table: string, ttlMs: number, limit: number): string {
  const where = ttlMs > 0 ? ` WHERE t >= now64(3) - toIntervalMillisecond(${Math.round(ttlMs)})` : '';
  const top = limit > 0 ? ` ORDER BY sn DESC LIMIT ${limit}` : '';
  return `SELECT h, sn FROM ${table}${where}${top}`;
}
