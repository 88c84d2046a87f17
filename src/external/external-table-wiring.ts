import { join } from 'node:path';
import type { Catalog } from '../catalog/catalog.ts';
import type { PlannerDispatch } from '../cli/build-planner.ts';
import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import type { SqlQueryPlanner } from '../queries/sql-planner.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import type { Query } from '../sql/ast/query.ts';
import type { InsertStatement } from '../sql/ast/statement.ts';
import type { StreamStore } from '../stream/stream-store.ts';
import type { CatalogResolver } from '../streaming/catalog-resolver.ts';
import type { MaterializedViews } from '../views/materialized-views.ts';
import { Bz2ReadMirror } from './bz2-read-mirror.ts';
import { externalInsertHandler, ObjectIndexes } from './external-table-insert.ts';
import { externalTablesRead } from './external-table-reads.ts';
import {
  createExternalTableHandler,
  dropExternalTableHandler,
  dropStreamOrExternalTable,
  showCreateExternalTableHandler,
  showCreateStreamOrExternalTable,
  showExternalTablesHandler,
} from './external-table-statements.ts';
import { ExternalTables } from './external-tables.ts';
import { registerFormatSchemaStatements } from './format-schema-statements.ts';
import { FormatSchemas } from './format-schemas.ts';
import { leftoverInsertSpools, uploadLeftoverInsertSpools } from './s3-insert-spools.ts';
import { s3ViewTargets } from './s3-view-writer.ts';
import { EXTERNAL_STREAM_KIND } from './streams/external-streams.ts';

export interface ExternalWiringDeps {
  planner: SqlQueryPlanner;
  dispatch: PlannerDispatch;
  resolver: CatalogResolver;
  engine: Engine;
  catalog: Catalog;
  streams: StreamStore;
  defaultDatabase: string;
  /** The SELECT planner: SELECTs reading bz2 tables and streaming INSERTs go through it. */
  select: StatementHandler<Query>;
  /** The INSERT handler of streams: INSERTs into other targets go there. */
  insert: StatementHandler<InsertStatement>;
  /** Materialized views: they may write INTO external tables (with a data directory for the spools). */
  mvs: MaterializedViews;
  /** Format schema files live under `<dataDir>/format_schemas`; without it they are unavailable. */
  dataDir?: string;
  logger?: Logger;
}

/** Registers the statements of external tables (and format schemas) with the planner. */
export function wireExternalTables(deps: ExternalWiringDeps): {
  tables: ExternalTables;
  schemas: FormatSchemas | undefined;
} {
  const { planner, dispatch, defaultDatabase } = deps;
  const schemas =
    deps.dataDir !== undefined ? new FormatSchemas(deps.catalog, deps.dataDir, deps.engine) : undefined;
  const tables = new ExternalTables({
    engine: deps.engine,
    catalog: deps.catalog,
    defaultDatabase,
    nameTaken: (db, name) =>
      deps.streams.get(db, name) !== undefined ||
      deps.catalog.get('view', `${db}.${name}`) !== undefined ||
      deps.catalog.get(EXTERNAL_STREAM_KIND, `${db}.${name}`) !== undefined,
    ...(schemas ? { formatSchemaPath: (ref: string) => schemas.enginePath(ref) } : {}),
    ...(deps.dataDir !== undefined
      ? { bz2Mirror: new Bz2ReadMirror(join(deps.dataDir, 'external_reads'), deps.logger) }
      : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  deps.resolver.addFallback(tables.resolver());
  // One namespace: a stream does not take an external table's name.
  deps.streams.guard({
    beforeCreate: (db, name) => {
      if (tables.get(db, name))
        throw err('STREAM_ALREADY_EXISTS', {
          name: db === defaultDatabase ? name : `${db}.${name}`,
        });
    },
  });
  // A SELECT reading s3 tables of bz2 objects: their decompressed copies are brought up to date first.
  const select: StatementHandler<Query> = async (query, ctx) => {
    for (const key of externalTablesRead(query, deps.resolver)) {
      const dot = key.indexOf('.');
      await tables.prepareRead(key.slice(0, dot), key.slice(dot + 1));
    }
    return deps.select(query, ctx);
  };
  planner.register('Select', select).register('Union', select);
  const indexes = new ObjectIndexes();
  if (deps.dataDir !== undefined)
    deps.mvs.useExternalTargets(
      s3ViewTargets({
        tables,
        engine: deps.engine,
        spoolRoot: join(deps.dataDir, 'external_writes'),
        indexes,
        ...(deps.logger ? { logger: deps.logger } : {}),
      }),
    );
  // Rows a streaming INSERT spooled before a crash: uploaded in the background (never blocks start).
  if (deps.dataDir !== undefined) {
    const logger = deps.logger;
    const spoolRoot = join(deps.dataDir, 'external_writes');
    // Listed now, before this server can start an INSERT of its own.
    const leftovers = leftoverInsertSpools(spoolRoot);
    void uploadLeftoverInsertSpools(
      { tables, engine: deps.engine, spoolRoot, indexes, ...(logger ? { logger } : {}) },
      leftovers,
    ).catch((e) =>
      logger?.warn({ error: (e as Error).message }, 'external table: leftover streaming INSERT spools'),
    );
  }
  // An external table a materialized view writes into is not dropped under it.
  tables.guardDrops((db, name) => deps.mvs.writersOfExternal(db, name));
  const sd = { tables, defaultDatabase };
  planner.register('CreateExternalTable', createExternalTableHandler(sd));
  planner.register(
    'Insert',
    externalInsertHandler(
      {
        engine: deps.engine,
        tables,
        resolver: deps.resolver,
        defaultDatabase,
        readStreams: (keys, work) => deps.streams.read(keys, work),
        indexes,
        ...(deps.dataDir !== undefined
          ? {
              streaming: {
                select,
                spoolRoot: join(deps.dataDir, 'external_writes'),
                ...(deps.logger ? { logger: deps.logger } : {}),
              },
            }
          : {}),
      },
      deps.insert,
    ),
  );
  dispatch.drop
    .register('EXTERNAL TABLE', dropExternalTableHandler(sd))
    .wrap('STREAM', (h) => dropStreamOrExternalTable(sd, h))
    .wrap('TABLE', (h) => dropStreamOrExternalTable(sd, h));
  dispatch.show.register('EXTERNAL TABLES', showExternalTablesHandler(sd));
  dispatch.showCreate
    .register('EXTERNAL TABLE', showCreateExternalTableHandler(sd))
    .wrap('STREAM', (h) => showCreateStreamOrExternalTable(sd, h))
    .wrap('TABLE', (h) => showCreateStreamOrExternalTable(sd, h));
  if (schemas) registerFormatSchemaStatements({ planner, dispatch, schemas });
  return { tables, schemas };
}
