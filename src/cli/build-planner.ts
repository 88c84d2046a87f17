import { join } from 'node:path';
import type { Catalog } from '../catalog/catalog.ts';
import type { InputService } from '../connectors/inputs/input-service.ts';
import {
  createInputHandler,
  dropInputHandler,
  showCreateInputHandler,
  showInputsHandler,
} from '../connectors/inputs/input-statements.ts';
import { guardDatabaseDrop, guardStreamDrop } from '../connectors/inputs/stream-drop-guard.ts';
import type { SourceService } from '../connectors/sources/source-service.ts';
import {
  createDictionaryHandler,
  dropDictionaryHandler,
  showCreateDictionaryHandler,
  showDictionariesHandler,
  systemDictionaryHandler,
} from '../dictionaries/dictionary-statements.ts';
import { DictionaryStore } from '../dictionaries/dictionary-store.ts';
import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import { wireExternalTables } from '../external/external-table-wiring.ts';
import type { ExternalTables } from '../external/external-tables.ts';
import type { FormatSchemas } from '../external/format-schemas.ts';
import {
  createExternalStreamHandler,
  dropDatabaseDropsExternalStreams,
  dropExternalStreamHandler,
  insertIntoExternalHandler,
  refuseWriteOnlyReads,
  showCreateExternalStreamHandler,
  showExternalStreamsHandler,
} from '../external/streams/external-stream-statements.ts';
import { ExternalStreams } from '../external/streams/external-streams.ts';
import type { Logger } from '../log/logger.ts';
import { SqlQueryPlanner } from '../queries/sql-planner.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { insertHandler } from '../queries/statements/insert-statement.ts';
import { selectHandler } from '../queries/statements/select-statement.ts';
import {
  describeHandler,
  showCreateStreamHandler,
  showDatabasesHandler,
  showStreamsHandler,
} from '../queries/statements/show-statements.ts';
import {
  alterStreamHandler,
  createDatabaseHandler,
  createStreamHandler,
  dropDatabaseHandler,
  dropStreamHandler,
  optimizeStreamHandler,
  renameStreamHandler,
} from '../queries/statements/stream-statements.ts';
import { SubDispatch } from '../queries/statements/sub-dispatch.ts';
import {
  recoverHandler,
  subscribeHandler,
  unsubscribeHandler,
} from '../queries/subscriptions/subscription-statements.ts';
import { Subscriptions } from '../queries/subscriptions/subscriptions.ts';
import { randomAwareRanges } from '../random/random-ranges.ts';
import { randomStreamResolver } from '../random/random-resolver.ts';
import {
  createStreamOrRandomHandler,
  dropDatabaseForgetsRandomStreams,
  dropRandomStreamHandler,
  maxEventsOf,
  randomInsertRows,
} from '../random/random-statements.ts';
import { RandomStreams } from '../random/random-streams.ts';
import type { Query } from '../sql/ast/query.ts';
import type {
  DropStatement,
  RenameStatement,
  ShowCreateStatement,
  ShowStatement,
} from '../sql/ast/statement.ts';
import type { StreamStore } from '../stream/stream-store.ts';
import { CatalogResolver } from '../streaming/catalog-resolver.ts';
import { SharedStepReads } from '../streaming/shared-step-reads.ts';
import { storeRanges } from '../streaming/store-ranges.ts';
import { rewriteAggregateUdfs } from '../udf/aggregate-udf-rewrite.ts';
import { selectSourceColumns } from '../udf/select-source-columns.ts';
import type { UdfService } from '../udf/udf-service.ts';
import { createFunctionHandler, dropFunctionHandler, showFunctionsHandler } from '../udf/udf-statements.ts';
import { guardMaterializedViewAlter } from '../views/materialized-view-alter.ts';
import type { RetryPolicy } from '../views/materialized-view-runner.ts';
import {
  createMaterializedViewHandler,
  dropMaterializedViewHandler,
  showMaterializedViewsHandler,
  systemMaterializedViewHandler,
} from '../views/materialized-view-statements.ts';
import { MaterializedViews } from '../views/materialized-views.ts';
import {
  createViewHandler,
  dropDatabaseWithViewsHandler,
  dropStreamOrViewHandler,
  dropViewHandler,
  showCreateStreamOrViewHandler,
  showCreateViewHandler,
  showViewsHandler,
} from '../views/view-statements.ts';
import { ViewStore } from '../views/view-store.ts';

export interface PlannerDeps {
  engine: Engine;
  catalog: Catalog;
  streams: StreamStore;
  /** Inputs (CREATE/DROP/SHOW INPUT[S]); without it those statements are NOT_IMPLEMENTED. */
  inputs?: InputService;
  logger?: Logger;
  /** Backoff of failing materialized views (tests shorten it). */
  mvRetry?: RetryPolicy;
  /** The data directory: checkpoints of subscribed queries and views live under it. */
  dataDir?: string;
  /** Sources: a stream one writes into is not dropped or renamed. */
  sources?: SourceService;
  /** The directory dictionaries' FILE sources are confined to (default `<dataDir>/user_files`). */
  userFilesDir?: string;
  /** User-defined functions (CREATE/DROP FUNCTION, SHOW FUNCTIONS, calls in SQL). */
  udfs?: UdfService;
  /** The longest a live tail waits to cover several commits in one step (step-pacing.ts). */
  tailStepGapMs?: number;
  /** The longest views sharing a stream wait to step together (shared-step-reads.ts dueAt). */
  viewStepGapMs?: number;
  /** The share of a busy stream's commits a live tail may hold back for the next (step-pacing.ts). */
  tailLateShare?: number;
}

/** The statement families shared by several owners; each owner registers its part. */
export interface PlannerDispatch {
  drop: SubDispatch<DropStatement>;
  show: SubDispatch<ShowStatement>;
  showCreate: SubDispatch<ShowCreateStatement>;
  rename: SubDispatch<RenameStatement>;
}

const DEFAULT_DATABASE = 'default';

/** The Proton-dialect planner with every statement family Tributary supports registered. */
export function buildPlanner(deps: PlannerDeps): {
  planner: SqlQueryPlanner;
  dispatch: PlannerDispatch;
  resolver: CatalogResolver;
  views: ViewStore;
  mvs: MaterializedViews;
  sharedReads: SharedStepReads;
  randoms: RandomStreams;
  externals: ExternalStreams;
  dictionaries: DictionaryStore;
  externalTables: ExternalTables;
  formatSchemas: FormatSchemas | undefined;
} {
  const udfs = deps.udfs;
  const resolver = new CatalogResolver(
    deps.catalog,
    deps.streams,
    DEFAULT_DATABASE,
    udfs ? (name) => udfs.resolveFunction(name) : undefined,
  );
  // A view's query calling a JavaScript aggregate is rewritten where the view is expanded.
  const udaRewrite = udfs
    ? (q: Query, streaming: boolean) =>
        rewriteAggregateUdfs(
          q,
          (n) => udfs.definition(n),
          streaming,
          (sel) => selectSourceColumns(resolver, sel),
        )
    : undefined;
  if (udaRewrite) resolver.rewriteViews(udaRewrite);
  const sharedReads = new SharedStepReads({
    ...(deps.viewStepGapMs !== undefined ? { groupPacing: { maxGapMs: deps.viewStepGapMs } } : {}),
    pacing: {
      ...(deps.tailStepGapMs !== undefined ? { maxGapMs: deps.tailStepGapMs } : {}),
      ...(deps.tailLateShare !== undefined ? { lateShare: deps.tailLateShare } : {}),
    },
  });
  // Random streams: generated while streaming queries read them, a fresh batch in historical reads.
  const randoms = new RandomStreams({
    catalog: deps.catalog,
    streams: deps.streams,
    engine: deps.engine,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const ranges = randomAwareRanges(storeRanges(deps.streams, sharedReads), randoms);
  const base = { engine: deps.engine, streams: deps.streams, defaultDatabase: DEFAULT_DATABASE };
  const selectWith = (maxEvents: number | undefined) =>
    selectHandler({
      engine: deps.engine,
      resolver: randomStreamResolver(resolver, randoms, maxEvents),
      ranges,
      streamDefinition: (resolved, db, name) => resolver.streamDefinition(resolved, db, name),
      ...(udaRewrite ? { rewrite: udaRewrite } : {}),
    });
  // External streams (src/external/streams): the views and MVs that guard their names come below.
  let mvsLater: MaterializedViews | undefined;
  let viewsLater: ViewStore | undefined;
  let externalTablesLater: ExternalTables | undefined;
  const externals = new ExternalStreams({
    catalog: deps.catalog,
    streams: deps.streams,
    defaultDatabase: DEFAULT_DATABASE,
    nameTaken: (db, name) =>
      viewsLater?.get(db, name) !== undefined || externalTablesLater?.get(db, name) !== undefined,
    writersOf: (db, name) =>
      (mvsLater?.list(db) ?? []).filter((r) => r.value.target_stream === name).map((r) => r.key),
    readersOf: (db, name) => viewsLater?.dependents(db, name) ?? [],
    ...(deps.dataDir ? { dataDir: deps.dataDir } : {}),
    userFilesDir: deps.userFilesDir ?? join(deps.dataDir ?? deps.engine.dataPath, 'user_files'),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const externalDeps = { externals, defaultDatabase: DEFAULT_DATABASE };
  const insertIntoStreams = insertIntoExternalHandler(
    { ...externalDeps, engine: deps.engine, streams: deps.streams, resolver },
    // A random stream read by INSERT ... SELECT ... LIMIT n is a batch of n rows (randomInsertRows).
    (s, ctx) => {
      const rows = randomInsertRows(s);
      return insertHandler({ ...base, resolver: randomStreamResolver(resolver, randoms, rows) })(s, ctx);
    },
  );
  const select = (query: Query, ctx: Parameters<ReturnType<typeof selectHandler>>[1]) => {
    refuseWriteOnlyReads(externalDeps, query);
    return selectWith(query.kind === 'Select' ? maxEventsOf(query.settings) : undefined)(query, ctx);
  };
  const dispatch: PlannerDispatch = {
    drop: new SubDispatch<DropStatement>(
      (s) => s.object,
      (k) => `DROP ${k}`,
    )
      .register('STREAM', dropRandomStreamHandler(randoms, DEFAULT_DATABASE, dropStreamHandler(base)))
      .register('TABLE', dropRandomStreamHandler(randoms, DEFAULT_DATABASE, dropStreamHandler(base)))
      .register('DATABASE', dropDatabaseForgetsRandomStreams(randoms, dropDatabaseHandler(base))),
    show: new SubDispatch<ShowStatement>(
      (s) => s.what,
      (k) => `SHOW ${k}`,
    )
      .register('STREAMS', showStreamsHandler({ ...base, resolver }))
      .register('TABLES', showStreamsHandler({ ...base, resolver }))
      .register('DATABASES', showDatabasesHandler({ ...base, resolver })),
    showCreate: new SubDispatch<ShowCreateStatement>(
      (s) => s.object ?? 'STREAM',
      (k) => `SHOW CREATE ${k}`,
    )
      .register('STREAM', showCreateStreamHandler({ ...base, resolver }))
      .register('TABLE', showCreateStreamHandler({ ...base, resolver })),
    rename: new SubDispatch<RenameStatement>(
      (s) => s.object,
      (k) => `RENAME ${k}`,
    ),
  };
  // RENAME STREAM: inputs writing into the stream and views reading it (or reading a view of that
  // name) are named here; the view store is made below, and read at statement time.
  const inputs = deps.inputs;
  let viewStore: ViewStore | undefined;
  const renameStream = renameStreamHandler({
    ...base,
    dependents: (db, name) => [
      ...(inputs ? inputs.writersOf(db, name).map((w) => `input ${w}`) : []),
      ...(viewStore?.dependents(db, name) ?? []),
      ...(deps.sources ? deps.sources.writersOf(db, name).map((w) => `source ${w}`) : []),
    ],
  });
  dispatch.rename.register('STREAM', renameStream).register('TABLE', renameStream);
  const refuseRandomRename =
    (h: StatementHandler<RenameStatement>): StatementHandler<RenameStatement> =>
    async (s, ctx) => {
      for (const p of s.pairs)
        if (randoms.get(p.from.database ?? DEFAULT_DATABASE, p.from.name))
          throw err('NOT_IMPLEMENTED', {
            detail: `${p.from.name} is a random stream: RENAME is not supported for it (DROP and CREATE RANDOM STREAM again)`,
          });
      return h(s, ctx);
    };
  dispatch.rename.wrap('STREAM', refuseRandomRename).wrap('TABLE', refuseRandomRename);
  const planner = new SqlQueryPlanner()
    .register('Select', select)
    .register('Union', select)
    .register(
      'CreateStream',
      createExternalStreamHandler(
        externalDeps,
        createStreamOrRandomHandler(randoms, DEFAULT_DATABASE, createStreamHandler(base)),
      ),
    )
    .register('CreateDatabase', createDatabaseHandler(base))
    .register(
      'Alter',
      guardMaterializedViewAlter(() => mvsLater, DEFAULT_DATABASE, alterStreamHandler(base)),
    )
    .register('Insert', insertIntoStreams)
    .register('Describe', describeHandler({ ...base, resolver }))
    .register('Optimize', optimizeStreamHandler(base))
    .register('Drop', dispatch.drop.handler())
    .register('Rename', dispatch.rename.handler())
    .register('Show', dispatch.show.handler())
    .register('ShowCreate', dispatch.showCreate.handler());
  if (deps.dataDir !== undefined) {
    // Checkpointed queries (Proton's SUBSCRIBE / RECOVER / UNSUBSCRIBE).
    const subs = { select, subscriptions: new Subscriptions(deps.engine, deps.dataDir) };
    planner
      .register('Subscribe', subscribeHandler(subs))
      .register('Recover', recoverHandler(subs))
      .register('Unsubscribe', unsubscribeHandler(subs));
  }
  if (deps.inputs) {
    const inputs = deps.inputs;
    planner.register('CreateInput', createInputHandler(inputs));
    dispatch.drop
      .register('INPUT', dropInputHandler(inputs))
      .wrap('STREAM', (h) => guardStreamDrop(h, inputs, DEFAULT_DATABASE))
      .wrap('TABLE', (h) => guardStreamDrop(h, inputs, DEFAULT_DATABASE))
      .wrap('DATABASE', (h) => guardDatabaseDrop(h, inputs));
    dispatch.show.register('INPUTS', showInputsHandler(inputs));
    dispatch.showCreate.register('INPUT', showCreateInputHandler(inputs));
  }
  if (deps.sources) {
    const sources = deps.sources;
    const guard =
      (h: StatementHandler<DropStatement>): StatementHandler<DropStatement> =>
      async (s, ctx) => {
        sources.assertNoWriters(s.target.database ?? DEFAULT_DATABASE, s.target.name);
        return h(s, ctx);
      };
    dispatch.drop.wrap('STREAM', guard).wrap('TABLE', guard);
  }
  // Views (src/views). DROP STREAM and SHOW CREATE [STREAM] of a view's name reach the view (as
  // in Proton); DROP DATABASE drops the database's views first.
  const views = new ViewStore({
    engine: deps.engine,
    catalog: deps.catalog,
    streams: deps.streams,
    resolver,
    defaultDatabase: DEFAULT_DATABASE,
  });
  views.guardStreams();
  viewStore = views;
  // Materialized views (src/views): planned as POST /queries plans a streaming SELECT.
  const mvs = new MaterializedViews({
    engine: deps.engine,
    catalog: deps.catalog,
    streams: deps.streams,
    views,
    plan: (sql) => planner.plan(sql, { user: { username: 'system', role: 'admin' } }),
    defaultDatabase: DEFAULT_DATABASE,
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.mvRetry ? { retry: deps.mvRetry } : {}),
    ...(deps.dataDir ? { dataDir: deps.dataDir } : {}),
  });
  mvs.useExternalTargets(externals);
  mvs.guardStreams();
  mvsLater = mvs;
  viewsLater = views;
  dispatch.drop
    .register('EXTERNAL STREAM', dropExternalStreamHandler(externalDeps))
    .wrap('STREAM', (h) => dropExternalStreamHandler(externalDeps, h))
    .wrap('DATABASE', (h) => dropDatabaseDropsExternalStreams(externalDeps, h));
  dispatch.showCreate
    .register('EXTERNAL STREAM', showCreateExternalStreamHandler(externalDeps))
    .wrap('STREAM', (h) => showCreateExternalStreamHandler(externalDeps, h));
  dispatch.show.register('EXTERNAL STREAMS', showExternalStreamsHandler(externalDeps));
  const viewDeps = { views, defaultDatabase: DEFAULT_DATABASE };
  const mvDeps = { mvs, defaultDatabase: DEFAULT_DATABASE };
  const dropMv = dropMaterializedViewHandler(mvDeps);
  planner.register('CreateView', createViewHandler(viewDeps, createMaterializedViewHandler(mvDeps)));
  // Dictionaries (src/dictionaries): SYSTEM RELOAD DICTIONARY first, other SYSTEM commands to the MVs.
  const dictionaries = new DictionaryStore({
    engine: deps.engine,
    catalog: deps.catalog,
    streams: deps.streams,
    streamNamed: (db, name) => {
      const r = resolver.resolve(db, name);
      return r ? resolver.streamDefinition(r, db, name) : undefined;
    },
    defaultDatabase: DEFAULT_DATABASE,
    userFilesDir: deps.userFilesDir ?? join(deps.dataDir ?? deps.engine.dataPath, 'user_files'),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  dictionaries.guardStreams();
  planner.register('System', systemDictionaryHandler(dictionaries, systemMaterializedViewHandler(mvDeps)));
  planner.register('CreateDictionary', createDictionaryHandler(dictionaries));
  dispatch.drop
    .register('DICTIONARY', dropDictionaryHandler(dictionaries))
    .wrap('DATABASE', (h) => async (s, ctx) => {
      const plan = await h(s, ctx);
      if (plan.kind !== 'statement') return plan;
      return {
        ...plan,
        // The database's dictionaries go first: the streams they read can then be dropped.
        run: async (signal: AbortSignal) => {
          await dictionaries.dropDatabase(s.target.name);
          await plan.run(signal);
        },
      };
    });
  dispatch.show.register('DICTIONARIES', showDictionariesHandler(dictionaries));
  dispatch.showCreate.register('DICTIONARY', showCreateDictionaryHandler(dictionaries));
  dispatch.drop
    .register('VIEW', dropViewHandler(viewDeps, dropMv))
    .wrap('STREAM', (h) => dropStreamOrViewHandler(viewDeps, h, dropMv))
    .wrap('TABLE', (h) => dropStreamOrViewHandler(viewDeps, h, dropMv))
    .wrap('DATABASE', (h) => dropDatabaseWithViewsHandler(viewDeps, h));
  dispatch.show
    .register('VIEWS', showViewsHandler(viewDeps))
    .register('MATERIALIZED VIEWS', showMaterializedViewsHandler(mvDeps));
  dispatch.showCreate
    .register('VIEW', showCreateViewHandler(viewDeps))
    .register('MATERIALIZED VIEW', showCreateViewHandler(viewDeps))
    .wrap('STREAM', (h) => showCreateStreamOrViewHandler(viewDeps, h));
  if (udfs) {
    planner.register('CreateFunction', createFunctionHandler(udfs));
    dispatch.drop.register('FUNCTION', dropFunctionHandler(udfs));
    dispatch.show.register('FUNCTIONS', showFunctionsHandler(udfs));
  }
  // External tables (src/external): names resolved after streams and views; INSERT, DROP and
  // SHOW CREATE of their names reach them.
  const { tables: externalTables, schemas: formatSchemas } = wireExternalTables({
    planner,
    dispatch,
    resolver,
    engine: deps.engine,
    catalog: deps.catalog,
    streams: deps.streams,
    defaultDatabase: DEFAULT_DATABASE,
    // INSERT into an external table, else into an http external stream, else into a stream.
    insert: insertIntoStreams,
    select,
    mvs,
    ...(deps.dataDir !== undefined ? { dataDir: deps.dataDir } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  externalTablesLater = externalTables;
  return {
    planner,
    dispatch,
    resolver,
    views,
    mvs,
    sharedReads,
    randoms,
    externals,
    dictionaries,
    externalTables,
    formatSchemas,
  };
}
