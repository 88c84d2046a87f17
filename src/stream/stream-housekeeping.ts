import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../engine/engine.ts';
import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import { type StreamDefinition, streamKey } from './stream-definition.ts';
import {
  createStatements,
  frontDropStatements,
  frontStatements,
  frontTableName,
  readTable,
} from './stream-tables.ts';

/** Checks and repairs of a stream's engine objects and WAL directories (start-up, create). */

async function countOf(engine: Engine, sql: string): Promise<number> {
  return Number((await engine.query(sql, { format: 'TSV' })).text().trim());
}

/** UNKNOWN_DATABASE (404) unless the engine has the database. */
export async function checkDatabase(engine: Engine, db: string): Promise<void> {
  if ((await countOf(engine, `SELECT count() FROM system.databases WHERE name = ${quoteString(db)}`)) === 0) {
    throw err('UNKNOWN_DATABASE', { name: db });
  }
}

export async function tableExists(engine: Engine, db: string, table: string): Promise<boolean> {
  return (await tableEngine(engine, db, table)) !== undefined;
}

/** The engine of table `db.table` (`Merge`, `Buffer`, ...), or undefined when there is none. */
async function tableEngine(engine: Engine, db: string, table: string): Promise<string | undefined> {
  const sql = `SELECT engine FROM system.tables WHERE database = ${quoteString(db)} AND name = ${quoteString(table)}`;
  const text = (await engine.query(sql, { format: 'TSVRaw' })).text().trim();
  return text === '' ? undefined : text;
}

/**
 * Recreate engine tables a crash left missing (catalog written, DDL not), and bring a hybrid
 * stream made by an older Tributary to today's tables: its `db.name` was a Buffer over the
 * MergeTree (empty after a restart: the WAL replays what it held), now a Merge table over the front
 * Buffer and the MergeTree.
 */
export async function ensureTables(engine: Engine, def: StreamDefinition, logger?: Logger): Promise<void> {
  const engineOf = await tableEngine(engine, def.db, def.name);
  if (engineOf !== undefined) {
    if (def.storageType !== 'hybrid') return;
    if (engineOf === 'Buffer') {
      logger?.info(
        { stream: streamKey(def.db, def.name) },
        'replacing the Buffer table by a front and a Merge table',
      );
      await engine.query(`DROP TABLE ${readTable(def)} SYNC`);
    } else if (await tableExists(engine, def.db, frontTableName(def.name))) return;
    for (const sql of frontDropStatements(def)) await engine.query(sql);
    for (const sql of frontStatements(def)) await engine.query(sql);
    return;
  }
  logger?.warn(
    { stream: streamKey(def.db, def.name) },
    'engine tables of a stream were missing; recreating them',
  );
  await engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(def.db)}`);
  for (const sql of createStatements(def)) {
    await engine.query(sql.replace(/^CREATE TABLE /, 'CREATE TABLE IF NOT EXISTS '));
  }
}

/** `<db>/<name>` with characters outside [A-Za-z0-9_-] percent-encoded. */
export function walDirName(db: string, name: string): string {
  const enc = (s: string) =>
    s.replace(/[^A-Za-z0-9_-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return join(enc(db), enc(name));
}

/** Delete WAL directories under `root` of streams the catalog no longer has (a drop cut short). */
export async function removeOrphanWals(root: string, keep: Set<string>): Promise<void> {
  let dbs: string[];
  try {
    dbs = await readdir(root);
  } catch {
    return;
  }
  for (const db of dbs) {
    for (const name of await readdir(join(root, db)).catch(() => [] as string[])) {
      if (!keep.has(join(db, name))) await rm(join(root, db, name), { recursive: true, force: true });
    }
  }
}
