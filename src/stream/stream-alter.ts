import type { Engine } from '../engine/engine.ts';
import { quoteIdent, quoteString, withSettings } from '../engine/settings-clause.ts';
import type { Logger } from '../log/logger.ts';
import { type ColumnChange, columnMapping, stepsOrigin } from './alter-columns.ts';
import type { StreamDefinition } from './stream-definition.ts';
import {
  columnDdl,
  createStatements,
  frontDropStatements,
  frontStatements,
  historyTable,
  historyTableName,
  moveFrontStatements,
  qualify,
  readTable,
  writeTable,
} from './stream-tables.ts';
import { withTypeChecks } from './table-check-settings.ts';

/**
 * The engine side of ALTER STREAM's column commands and RENAME STREAM (README.md, "ALTER STREAM").
 *
 * A Buffer table takes ADD/DROP/MODIFY COLUMN but not RENAME COLUMN (measured: code 48), and the
 * Merge table names its tables by pattern, so neither can follow a rename. The front and Merge
 * tables of a hybrid stream are therefore emptied (the front moved into the MergeTree), dropped,
 * and created again around the MergeTree's ALTERs; the caller holds ingest back meanwhile
 * (IngestGate). streaming/memory streams rebuild their Memory table.
 */

/** One command applied to the definition it produced (`def`) from the one before it (`before`). */
export interface AlterStep {
  readonly before: StreamDefinition;
  readonly def: StreamDefinition;
  readonly change: ColumnChange;
}

/** How far the engine got, how long the front table was missing, and what stopped it. */
export interface AlterOutcome {
  /** Steps the engine applied (a prefix of the steps given). */
  applied: number;
  error?: unknown;
  /** Milliseconds between dropping the Buffer and creating it again (0: Memory table). */
  frontGapMs: number;
}

/** The ALTER TABLE of one change on one engine table. */
export function alterColumnSql(table: string, change: ColumnChange, withTtl: boolean): string {
  const head = `ALTER TABLE ${table}`;
  switch (change.kind) {
    case 'add': {
      const where = change.first
        ? ' FIRST'
        : change.after !== undefined
          ? ` AFTER ${quoteIdent(change.after)}`
          : '';
      return `${head} ADD COLUMN IF NOT EXISTS ${columnDdl(change.column, withTtl)}${where}`;
    }
    case 'drop':
      return `${head} DROP COLUMN IF EXISTS ${quoteIdent(change.name)}`;
    case 'rename':
      return `${head} RENAME COLUMN IF EXISTS ${quoteIdent(change.from)} TO ${quoteIdent(change.to)}`;
    case 'modify':
      return `${head} MODIFY COLUMN IF EXISTS ${columnDdl(change.column, withTtl)}`;
    case 'comment':
      return `${head} COMMENT COLUMN IF EXISTS ${quoteIdent(change.name)} ${quoteString(change.comment)}`;
  }
}

/**
 * Before a type change: convert every stored value once and throw the engine's error if one does
 * not convert. (A MergeTree applies MODIFY COLUMN's metadata before its mutation converts the
 * parts; a failing conversion leaves a table that cannot be read — measured.)
 */
async function checkConversion(engine: Engine, table: string, change: ColumnChange): Promise<void> {
  if (change.kind !== 'modify') return;
  const { before, column } = change;
  if (before.alias || column.alias || before.engineType === column.engineType) return;
  await engine.query(
    `SELECT count() FROM ${table} WHERE NOT ignore(CAST(${quoteIdent(column.name)} AS ${column.engineType}))`,
  );
}

/** ALTER one table through the steps, stopping at the first the engine refuses. */
async function alterTable(
  engine: Engine,
  table: string,
  steps: readonly AlterStep[],
  withTtl: boolean,
): Promise<{ applied: number; error?: unknown }> {
  for (let i = 0; i < steps.length; i++) {
    const { change, def } = steps[i] as AlterStep;
    try {
      await checkConversion(engine, table, change);
      await engine.query(withTypeChecks(alterColumnSql(table, change, withTtl), def.settings));
    } catch (error) {
      return { applied: i, error };
    }
  }
  return { applied: steps.length };
}

/**
 * A Memory table (streaming/memory storage) is rebuilt rather than ALTERed: its ALTER RENAME COLUMN
 * loses the column's values and its ADD COLUMN gives existing rows the type's default instead of
 * the DEFAULT expression (measured). The rows are copied into a table of the new shape (renamed
 * columns carried over, modified ones CAST, new ones take their DEFAULT), which is then exchanged
 * for the old one atomically. All or nothing: a value that does not convert fails the copy.
 */
async function rebuildMemoryTable(engine: Engine, steps: readonly AlterStep[]): Promise<void> {
  const first = steps[0] as AlterStep;
  const last = steps.at(-1) as AlterStep;
  const front = readTable(first.before);
  const scratchName = `.tp_alter.${last.def.name}`;
  const scratch = qualify(last.def.db, scratchName);
  await engine.query(`DROP TABLE IF EXISTS ${scratch}`);
  const [create] = createStatements({ ...last.def, name: scratchName });
  await engine.query(create as string);
  try {
    const { names, exprs } = columnMapping(last.def, stepsOrigin(steps));
    await engine.query(
      withSettings(`INSERT INTO ${scratch} (${names.join(', ')}) SELECT ${exprs.join(', ')} FROM ${front}`, {
        insert_allow_materialized_columns: 1,
      }),
    );
    await engine.query(`EXCHANGE TABLES ${front} AND ${scratch}`);
  } finally {
    await engine.query(`DROP TABLE IF EXISTS ${scratch}`);
  }
}

/**
 * Apply column changes to a stream's engine tables. The caller has drained ingest. Answers how
 * many steps were applied; the front table always matches the definition after those steps.
 */
export async function alterStreamTables(
  engine: Engine,
  steps: readonly AlterStep[],
  logger?: Logger,
): Promise<AlterOutcome> {
  const first = steps[0];
  if (!first) return { applied: 0, frontGapMs: 0 };
  const def = first.before;
  const history = historyTable(def);
  if (!history) {
    if (steps.every((s) => s.change.kind === 'comment')) {
      const r = await alterTable(engine, readTable(def), steps, false);
      return { ...r, frontGapMs: 0 };
    }
    try {
      await rebuildMemoryTable(engine, steps);
      return { applied: steps.length, frontGapMs: 0 };
    } catch (error) {
      return { applied: 0, error, frontGapMs: 0 };
    }
  }
  if (steps.every((s) => s.change.kind === 'comment')) {
    // Comments change no data: the tables take them in place, no move needed.
    const r = await alterTable(engine, history, steps, true);
    const front = await alterTable(engine, writeTable(def), steps.slice(0, r.applied), false);
    const read = await alterTable(engine, readTable(def), steps.slice(0, r.applied), false);
    return { applied: r.applied, error: r.error ?? front.error ?? read.error, frontGapMs: 0 };
  }
  // The caller moved the front into the MergeTree (every acknowledged row is there) and holds
  // reads and ingest back; what a move left is moved again before the front is rebuilt.
  await emptyFront(engine, def);
  const dropped = performance.now();
  for (const sql of frontDropStatements(def)) await engine.query(sql);
  const r = await alterTable(engine, history, steps, true);
  const now = r.applied > 0 ? (steps[r.applied - 1] as AlterStep).def : def;
  try {
    for (const sql of frontStatements(now)) await engine.query(sql);
  } catch (e) {
    // The next start recreates them from the catalog (ensureTables); reads fail until then.
    logger?.error({ err: e, stream: `${def.db}.${def.name}` }, 'front tables could not be recreated');
    return { applied: r.applied, error: r.error ?? e, frontGapMs: performance.now() - dropped };
  }
  return { ...r, frontGapMs: performance.now() - dropped };
}

/** Move what the front of a hybrid stream still holds into its MergeTree (none when it is empty). */
async function emptyFront(engine: Engine, def: StreamDefinition): Promise<void> {
  for (const sql of moveFrontStatements(def)) await engine.query(sql);
}

/**
 * Move a stream's engine tables to a new name (the database may differ): move the front into the
 * MergeTree and drop the front and Merge tables, RENAME the MergeTree (or the Memory table), create
 * the front and Merge tables of the new name. On failure the
 * old tables are put back as far as possible and the error is thrown.
 */
export async function renameStreamTables(
  engine: Engine,
  from: StreamDefinition,
  to: StreamDefinition,
): Promise<void> {
  const history = historyTable(from);
  if (!history) {
    await engine.query(`RENAME TABLE ${readTable(from)} TO ${readTable(to)}`);
    return;
  }
  await emptyFront(engine, from);
  for (const sql of frontDropStatements(from)) await engine.query(sql);
  const restore = async () => {
    for (const sql of frontStatements(from)) await engine.query(sql).catch(() => undefined);
  };
  const target = qualify(to.db, historyTableName(to.name));
  try {
    await engine.query(`RENAME TABLE ${history} TO ${target}`);
  } catch (e) {
    await restore();
    throw e;
  }
  try {
    for (const sql of frontStatements(to)) await engine.query(sql);
  } catch (e) {
    for (const sql of frontDropStatements(to)) await engine.query(sql).catch(() => undefined);
    await engine.query(`RENAME TABLE ${target} TO ${history}`).catch(() => undefined);
    await restore();
    throw e;
  }
}
