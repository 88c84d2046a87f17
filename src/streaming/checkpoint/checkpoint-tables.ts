import type { Engine } from '../../engine/engine.ts';
import { quoteIdent, quoteString } from '../../engine/settings-clause.ts';
import { IN_FOLD_ORDER } from '../state-table.ts';

/**
 * The persistent engine database holding the tables saved with checkpoints. Not the state
 * database `_tributary_state`, which is wiped at every start (state-table.ts).
 */
export const CHECKPOINT_DB = '_tributary_checkpoints';

/**
 * The engine-side half of a checkpoint store: copies of an execution's state tables, named
 * `<owner>__<checkpoint number>__<key>` in CHECKPOINT_DB (MergeTree, so they are on disk and
 * survive a restart; ORDER BY tuple() takes any column types, aggregate states included).
 */
export class CheckpointTables {
  constructor(
    private readonly engine: Engine,
    /** A name prefix unique to the owner (letters, digits and `_`). */
    private readonly prefix: string,
  ) {}

  /** Copy `live` tables (key -> table) as checkpoint `n`; answers key -> saved copy. */
  async save(n: number, live: Readonly<Record<string, string>>): Promise<Record<string, string>> {
    if (Object.keys(live).length === 0) return {};
    await this.engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(CHECKPOINT_DB)}`);
    const saved: Record<string, string> = {};
    for (const [key, table] of Object.entries(live)) {
      const copy = this.tableName(n, key);
      await this.engine.query(`DROP TABLE IF EXISTS ${copy}`);
      await this.engine.query(
        `CREATE TABLE ${copy} ENGINE = MergeTree ORDER BY tuple() ` +
          'SETTINGS fsync_after_insert = 1, fsync_part_directory = 1 ' +
          `AS SELECT * FROM ${table}`,
        // state tables are copied in the order of their rows (state-table.ts IN_FOLD_ORDER)
        { settings: IN_FOLD_ORDER },
      );
      saved[key] = copy;
    }
    return saved;
  }

  /** Drop every saved table of the owner except `keep` (copies of older or unfinished saves). */
  async dropAllBut(keep: readonly string[]): Promise<void> {
    const kept = new Set(keep);
    for (const name of await this.list()) {
      const table = `${quoteIdent(CHECKPOINT_DB)}.${quoteIdent(name)}`;
      if (!kept.has(table)) await this.engine.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }

  /** Drop these saved tables (qualified names, as `save` answered them). */
  async drop(tables: readonly string[]): Promise<void> {
    for (const table of tables) await this.engine.query(`DROP TABLE IF EXISTS ${table}`);
  }

  /** Drop the saved tables of every nested store (prefix `<prefix>_n<index>`). */
  async dropNested(): Promise<void> {
    for (const name of await this.list(`${this.prefix}_n`))
      await this.engine.query(`DROP TABLE IF EXISTS ${quoteIdent(CHECKPOINT_DB)}.${quoteIdent(name)}`);
  }

  private async list(start = `${this.prefix}__`): Promise<string[]> {
    const text = (
      await this.engine.query(
        `SELECT name FROM system.tables WHERE database = ${quoteString(CHECKPOINT_DB)} ` +
          `AND startsWith(name, ${quoteString(start)})`,
      )
    ).text();
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as [string])[0]);
  }

  private tableName(n: number, key: string): string {
    return `${quoteIdent(CHECKPOINT_DB)}.${quoteIdent(`${this.prefix}__${n}__${key.replace(/\W/g, '_')}`)}`;
  }
}
