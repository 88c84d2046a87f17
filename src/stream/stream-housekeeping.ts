import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../engine/engine.ts';
import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import { type StreamDefinition, streamKey } from './stream-definition.ts';
import { bufferStatement, createStatements, frontTable, NEVER_FLUSH_PARAMS } from './stream-tables.ts';

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
  const sql = `SELECT count() FROM system.tables WHERE database = ${quoteString(db)} AND name = ${quoteString(table)}`;
  return (await countOf(engine, sql)) > 0;
}

/**
 * Recreate engine tables a crash left missing (catalog written, DDL not), and a Buffer created by
 * an older Tributary that flushed itself (its rows go to the MergeTree as it is dropped).
 */
export async function ensureTables(engine: Engine, def: StreamDefinition, logger?: Logger): Promise<void> {
  if (await tableExists(engine, def.db, def.name)) {
    if (def.storageType === 'hybrid' && !(await flushesOnlyWhenAsked(engine, def))) {
      logger?.info(
        { stream: streamKey(def.db, def.name) },
        'recreating the Buffer table with manual flushing',
      );
      await engine.query(`DROP TABLE ${frontTable(def)} SYNC`);
      await engine.query(bufferStatement(def));
    }
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

async function flushesOnlyWhenAsked(engine: Engine, def: StreamDefinition): Promise<boolean> {
  const sql = `SELECT engine_full FROM system.tables WHERE database = ${quoteString(def.db)} AND name = ${quoteString(def.name)}`;
  const text = (await engine.query(sql, { format: 'TSVRaw' })).text();
  return text.replace(/\s+/g, '').includes(NEVER_FLUSH_PARAMS.replace(/\s+/g, ''));
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
