import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Engine } from '../engine/engine.ts';
import { guardedEngine } from '../engine/guarded-engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { settingsRecord } from '../queries/statements/stream-spec-from-ast.ts';
import { statementPlan } from '../queries/static-rows.ts';
import { isStreamingQuery } from '../sql/analyzer/streaming.ts';
import type { Query } from '../sql/ast/query.ts';
import type { InsertStatement } from '../sql/ast/statement.ts';
import { recordingResolver, type TableResolver } from '../sql/translator/resolver.ts';
import { translateExpression, translateQuery } from '../sql/translator/translate.ts';
import { PauseGate } from '../views/pause-gate.ts';
import type { ExternalTableRecord } from './external-table-definition.ts';
import { type ExternalTables, scrubbed } from './external-tables.ts';
import { engineSettings } from './s3-engine-sql.ts';
import { INSERT_SPOOL_PREFIX, writeInsertSpoolMeta } from './s3-insert-spools.ts';
import { newObjectKey, timestampIndex } from './s3-object-keys.ts';
import { writeObjects } from './s3-object-write.ts';
import { S3StreamingInsert } from './s3-streaming-insert.ts';
import { s3Limits } from './s3-table-settings.ts';
import { S3ViewWriter } from './s3-view-writer.ts';

export interface ExternalInsertDeps {
  engine: Engine;
  tables: ExternalTables;
  resolver: TableResolver;
  defaultDatabase: string;
  /** Read locks of the streams an INSERT ... SELECT reads. */
  readStreams: <T>(keys: Iterable<string>, work: () => Promise<T>) => Promise<T>;
  /** The time now (tests pin it). */
  clock?: () => Date;
  /** Timestamp indexes of new objects, shared with the writers of materialized views. */
  indexes?: ObjectIndexes;
  /**
   * For INSERT ... SELECT from a stream (run as a streaming query): the SELECT's planner, and the
   * directory where such inserts spool their rows. Without them, it is refused.
   */
  streaming?: { select: StatementHandler<Query>; spoolRoot: string; logger?: Logger };
}

/**
 * Gives each new object of a table a distinct timestamp index: two writes in the same millisecond
 * take the next millisecond's index (an object is never overwritten).
 */
export class ObjectIndexes {
  private readonly last = new Map<string, number>();

  next(table: string, now: Date): string {
    const prev = this.last.get(table) ?? 0;
    const ms = Math.max(now.getTime(), prev + 1);
    this.last.set(table, ms);
    return timestampIndex(new Date(ms));
  }
}

/**
 * INSERT INTO <s3 table> [(cols)] VALUES ... | SELECT ... [SETTINGS s3_*=...]: the rows go to a
 * new object named by the write_to template with a timestamp index before the extension, one per
 * partition with PARTITION BY. Other targets go to `next`.
 */
export function externalInsertHandler(
  deps: ExternalInsertDeps,
  next: StatementHandler<InsertStatement>,
): StatementHandler<InsertStatement> {
  const indexes = deps.indexes ?? new ObjectIndexes();
  const clock = deps.clock ?? (() => new Date());
  return async (s, ctx) => {
    const record = s.target
      ? deps.tables.get(s.target.database ?? deps.defaultDatabase, s.target.name)?.value
      : undefined;
    if (!record) return next(s, ctx);
    const config = deps.tables.config(record);
    if (config.writeTo === undefined) throw err('EXTERNAL_TABLE_READ_ONLY', { table: record.name });
    const limits = { ...config.limits, ...s3Limits(record.name, settingsRecord(s.settings), true) };
    const columns = insertColumns(s, record);
    let source: string;
    const reads = new Set<string>();
    if (s.values) {
      for (const row of s.values)
        if (row.length !== columns.length)
          throw err('BAD_ARGUMENTS', {
            detail: `INSERT has ${columns.length} columns but a VALUES row has ${row.length} values`,
          });
      source = `VALUES ${s.values.map((row) => `(${row.map((e) => translateExpression(e)).join(', ')})`).join(', ')}`;
    } else if (s.query) {
      if (isStreamingQuery(s.query, deps.resolver)) {
        const streaming = deps.streaming;
        if (!streaming)
          throw err('NOT_IMPLEMENTED', {
            detail:
              'INSERT into an s3 table from a stream needs a server with a data directory; read table(<stream>) to write what the stream holds now',
          });
        const select = await streaming.select(s.query, {
          ...ctx,
          options: { ...ctx.options, type: 'streaming' },
        });
        if (select.kind !== 'rows')
          throw err('INTERNAL', { detail: 'the SELECT of a streaming INSERT planned no rows' });
        const spoolDir = join(streaming.spoolRoot, `${INSERT_SPOOL_PREFIX}${randomUUID()}`);
        const writer = new S3ViewWriter({
          tables: deps.tables,
          engine: deps.engine,
          db: record.db,
          table: record.name,
          spoolDir,
          gate: new PauseGate(),
          indexes,
          limits,
          ...(streaming.logger ? { logger: streaming.logger } : {}),
        });
        return new S3StreamingInsert(select, columns, writer, record.name, (header) =>
          writeInsertSpoolMeta(spoolDir, { db: record.db, table: record.name, header, limits }),
        );
      }
      source = translateQuery(s.query, {
        resolver: recordingResolver(deps.resolver, reads),
        protonColumnNames: false,
      });
    } else throw err('BAD_ARGUMENTS', { detail: 'INSERT into an external table needs VALUES or a SELECT' });
    const structure = deps.tables.structure(record);
    const partitionBy =
      record.partition_by !== undefined ? translateExpression(record.partition_by) : undefined;
    const formatSchemaPath = deps.tables.formatSchemaPath(config);
    return statementPlan(ctx.sql, 'insert', async (signal) => {
      const creds = await deps.tables.credentials(record);
      const key = newObjectKey(
        config.writeTo as string,
        indexes.next(`${record.db}.${record.name}`, clock()),
      );
      const engine = guardedEngine(deps.engine, (work) => deps.readStreams(reads, work));
      try {
        await writeObjects(
          engine,
          {
            key,
            structure,
            config,
            creds,
            ...(partitionBy !== undefined ? { partitionBy } : {}),
            columns: columns.map(quoteIdent),
            settings: engineSettings(config, limits, formatSchemaPath),
          },
          source,
          { lane: 'user', signal },
        );
      } catch (e) {
        throw scrubbed(e, creds);
      }
    });
  };
}

function insertColumns(s: InsertStatement, record: ExternalTableRecord): string[] {
  const all = record.columns.map((c) => c.name);
  if (!s.columns) return all;
  return s.columns.map((c) => {
    if (c.kind !== 'Identifier')
      throw err('BAD_ARGUMENTS', { detail: 'INSERT into an external table names its columns (no * EXCEPT)' });
    const name = c.parts[c.parts.length - 1] as string;
    if (!all.includes(name)) throw err('INGEST_UNKNOWN_COLUMN', { column: name, stream: record.name });
    return name;
  });
}
