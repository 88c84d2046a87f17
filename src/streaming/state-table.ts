import { randomUUID } from 'node:crypto';
import type { Engine, EngineResult } from '../engine/engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';

/** The database holding the state tables of running streaming queries. */
export const STATE_DB = '_tributary_state';

/**
 * Reads of a state table in the order its rows were appended: order-dependent merges (`latest`,
 * `group_array`, ties of `top_k` / `max_k`) then merge a group's partial states fold by fold,
 * also after a compaction or a RECOVER (several engine threads would interleave the blocks).
 */
export const IN_FOLD_ORDER = { max_threads: 1 } as const;

/**
 * The partial aggregate states of one streaming aggregation, in an engine table (DESIGN.md §3):
 * each fold appends one row of `-State` values per group; emits merge them. A Memory table keeps
 * appends at about a millisecond; `compact` merges the rows of each group back into one when the
 * table has grown, and the table is dropped when the query ends.
 */
export class StateTable {
  readonly name: string;
  private rowsSinceCompact = 0;
  private pendingDeletes: string[] = [];

  constructor(
    private readonly engine: Engine,
    label: string,
  ) {
    this.name = `${quoteIdent(STATE_DB)}.${quoteIdent(`${label}_${randomUUID().replaceAll('-', '')}`)}`;
  }

  /** Create the table with the columns (and types) of `emptySelect`, a fold over no rows. */
  async create(emptySelect: string): Promise<void> {
    await this.engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(STATE_DB)}`);
    await this.engine.query(`CREATE TABLE ${this.name} ENGINE = Memory AS ${emptySelect}`);
  }

  /**
   * Append the rows of a fold query; `then`, a statement run in the same engine call, answers the
   * call's result (one round trip instead of two).
   */
  async append(foldSelect: string, then?: string): Promise<EngineResult> {
    const r = await this.run(`INSERT INTO ${this.name} ${foldSelect}${then ? `;\n${then}` : ''}`);
    this.rowsSinceCompact++;
    return r;
  }

  /** Run a statement that reads this table (an emit), after any deletes still pending. */
  select(sql: string): Promise<EngineResult> {
    return this.run(sql, true);
  }

  /**
   * Delete rows matching `condition` (retired windows). The delete runs at the start of the next
   * call on this table, so that it costs no engine call of its own.
   */
  delete(condition: string): void {
    this.pendingDeletes.push(condition);
  }

  private run(sql: string, inFoldOrder = false): Promise<EngineResult> {
    const options = inFoldOrder ? { settings: IN_FOLD_ORDER } : undefined;
    if (this.pendingDeletes.length === 0) return this.engine.query(sql, options);
    const condition = this.pendingDeletes.map((c) => `(${c})`).join(' OR ');
    this.pendingDeletes = [];
    return this.engine.query(
      `ALTER TABLE ${this.name} DELETE WHERE ${condition} SETTINGS mutations_sync = 1;\n${sql}`,
      options,
    );
  }

  /** Run the deletes still pending (before the table is copied into a checkpoint). */
  async flushDeletes(): Promise<void> {
    if (this.pendingDeletes.length > 0) await this.run('SELECT 1');
  }

  /** Fill the (new, empty) table with the rows of `saved`, a copy of it in a checkpoint. */
  async restore(saved: string): Promise<void> {
    await this.engine.query(`INSERT INTO ${this.name} SELECT * FROM ${saved}`, { settings: IN_FOLD_ORDER });
  }

  /** Folds appended since the last compaction. */
  get appendsSinceCompact(): number {
    return this.rowsSinceCompact;
  }

  /**
   * Replace the table's rows by `mergedSelect` (one row per group, read from this table): the
   * result goes to a new table that takes this one's place.
   */
  async compact(mergedSelect: (table: string) => string): Promise<void> {
    await this.run('SELECT 1');
    const next = `${this.name.slice(0, -1)}_c\``;
    await this.engine.query(`DROP TABLE IF EXISTS ${next}`);
    await this.engine.query(`CREATE TABLE ${next} ENGINE = Memory AS ${mergedSelect(this.name)}`, {
      settings: IN_FOLD_ORDER,
    });
    await this.engine.query(`EXCHANGE TABLES ${this.name} AND ${next}`);
    await this.engine.query(`DROP TABLE ${next}`);
    this.rowsSinceCompact = 0;
  }

  async drop(): Promise<void> {
    await this.engine.query(`DROP TABLE IF EXISTS ${this.name}`);
  }
}

/**
 * Drop the state of streaming queries that ran before a restart: ad-hoc queries end with the
 * process, so whatever is left in the state database is stale.
 */
export async function resetStreamingState(engine: Engine): Promise<void> {
  await engine.query(`DROP DATABASE IF EXISTS ${quoteIdent(STATE_DB)}`);
  await engine.query(`CREATE DATABASE ${quoteIdent(STATE_DB)}`);
}
