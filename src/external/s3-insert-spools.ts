import { readdirSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../engine/engine.ts';
import type { Logger } from '../log/logger.ts';
import type { ResultColumn } from '../queries/query-types.ts';
import { PauseGate } from '../views/pause-gate.ts';
import type { ObjectIndexes } from './external-table-insert.ts';
import type { ExternalTables } from './external-tables.ts';
import { S3ViewWriter } from './s3-view-writer.ts';

/** Spool directories of streaming INSERTs start with this (those of materialized views do not). */
export const INSERT_SPOOL_PREFIX = 'insert-';
const META_FILE = 'insert.json';

/** What a streaming INSERT's spool must know to be uploaded by a server that did not start it. */
export interface InsertSpoolMeta {
  db: string;
  table: string;
  /** The spooled rows' columns (the SELECT's types under the INSERT's column names). */
  header: readonly ResultColumn[];
  /** The INSERT's own s3_* limits over the table's. */
  limits: Readonly<Record<string, number | boolean>>;
}

/** Written (durably) before the first row reaches the spool of a streaming INSERT. */
export async function writeInsertSpoolMeta(dir: string, meta: InsertSpoolMeta): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `${META_FILE}.tmp`);
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.write(JSON.stringify(meta));
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(tmp, join(dir, META_FILE));
}

/** The spool directories of streaming INSERTs under `spoolRoot` now (names). */
export function leftoverInsertSpools(spoolRoot: string): string[] {
  try {
    return readdirSync(spoolRoot, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name.startsWith(INSERT_SPOOL_PREFIX))
      .map((e) => e.name);
  } catch {
    return [];
  }
}

export interface InsertSpoolRecoveryDeps {
  tables: ExternalTables;
  engine: Engine;
  spoolRoot: string;
  indexes: ObjectIndexes;
  logger?: Logger;
}

/**
 * A streaming `INSERT INTO <s3 table> SELECT ... FROM <stream>` is a query: like Proton's, it
 * ends with the server and is not started again. A clean stop uploads what it buffered; after a
 * crash its spool is still on disk, so at start every such spool is uploaded as one last object
 * (named by the table's write_to template, as the INSERT would have) and removed. A spool whose
 * upload fails stays for the next start; one whose table is gone is removed with a warning.
 * `entries` are the spools found at start (leftoverInsertSpools, listed before any INSERT of this
 * server can make one). Returns the number of spools uploaded.
 */
export async function uploadLeftoverInsertSpools(
  deps: InsertSpoolRecoveryDeps,
  entries: readonly string[] = leftoverInsertSpools(deps.spoolRoot),
): Promise<number> {
  let uploaded = 0;
  for (const name of entries) {
    const dir = join(deps.spoolRoot, name);
    let meta: InsertSpoolMeta | undefined;
    try {
      meta = JSON.parse(await readFile(join(dir, META_FILE), 'utf8')) as InsertSpoolMeta;
    } catch {
      // No description: the INSERT stopped before its first row was spooled.
      meta = undefined;
    }
    if (!meta || !deps.tables.get(meta.db, meta.table)) {
      if (meta)
        deps.logger?.warn(
          { table: `${meta.db}.${meta.table}`, spool: name },
          'external table: a streaming INSERT left rows for a table that no longer exists; they are dropped',
        );
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    const writer = new S3ViewWriter({
      tables: deps.tables,
      engine: deps.engine,
      db: meta.db,
      table: meta.table,
      spoolDir: dir,
      gate: new PauseGate(),
      indexes: deps.indexes,
      limits: meta.limits,
      ...(deps.logger ? { logger: deps.logger } : {}),
    });
    writer.setHeader(meta.header);
    try {
      await writer.flushAndRemove();
      uploaded++;
      deps.logger?.info(
        { table: `${meta.db}.${meta.table}`, spool: name },
        'external table: rows a streaming INSERT buffered before the server stopped are uploaded',
      );
    } catch (e) {
      deps.logger?.warn(
        { table: `${meta.db}.${meta.table}`, spool: name, error: (e as Error).message },
        'external table: rows a streaming INSERT left could not be uploaded; retried at the next start',
      );
    }
  }
  return uploaded;
}
