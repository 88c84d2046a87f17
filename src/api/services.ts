import type { Catalog } from '../catalog/catalog.ts';
import type { DashboardStore } from '../catalog/dashboard-store.ts';
import type { PipelineStore } from '../catalog/pipeline-store.ts';
import type { SavedQueryStore } from '../catalog/saved-query-store.ts';
import type { UserStore } from '../catalog/user-store.ts';
import type { WorkspaceStore } from '../catalog/workspace-store.ts';
import type { Config } from '../config/config.ts';
import type { InputService } from '../connectors/inputs/input-service.ts';
import type { SinkService } from '../connectors/sinks/sink-service.ts';
import type { SourceService } from '../connectors/sources/source-service.ts';
import type { DictionaryStore } from '../dictionaries/dictionary-store.ts';
import type { Engine } from '../engine/engine.ts';
import type { ExternalTables } from '../external/external-tables.ts';
import type { FormatSchemas } from '../external/format-schemas.ts';
import type { ExternalStreams } from '../external/streams/external-streams.ts';
import type { LicenseStore } from '../license/license-store.ts';
import type { Logger } from '../log/logger.ts';
import type { QueryPlanner } from '../queries/execution.ts';
import type { QueryRegistry } from '../queries/query-registry.ts';
import type { RandomStreams } from '../random/random-streams.ts';
import type { TableResolver } from '../sql/translator/resolver.ts';
import type { StreamStore } from '../stream/stream-store.ts';
import type { SharedStepReads } from '../streaming/shared-step-reads.ts';
import type { UdfService } from '../udf/udf-service.ts';
import type { MaterializedViews } from '../views/materialized-views.ts';
import type { ViewStore } from '../views/view-store.ts';
import type { VersionInfo } from './version-info.ts';

/** Everything the HTTP layer calls into. Built once by `src/cli/tributary.ts`. */
export interface Services {
  config: Config;
  logger: Logger;
  engine: Engine;
  catalog: Catalog;
  users: UserStore;
  workspace: WorkspaceStore;
  dashboards: DashboardStore;
  savedQueries: SavedQueryStore;
  pipelines: PipelineStore;
  /** Uploaded and trial licenses (they gate nothing). */
  licenses: LicenseStore;
  /** The time now; tests pass a fake one (license validations start 4 hours after activation). */
  clock: () => Date;
  version: VersionInfo;
  /** Turns SQL into an execution (statement, historical or streaming). */
  planner: QueryPlanner;
  /** Queries run through the API. */
  queries: QueryRegistry;
  /** Streams: definitions, tables, WALs, ingest and committed-range notifications. */
  streams: StreamStore;
  /** Inputs (elastic listeners): definitions, listeners, counters. */
  inputs?: InputService;
  /** Names in SQL (streams, views, MVs) as the planner resolves them (sqlanalyze). */
  resolver: TableResolver;
  /** Views: catalog records, validation, View resources. */
  views: ViewStore;
  /** Materialized views: their records, runners, pause/resume, state. */
  mvs: MaterializedViews;
  /** Shared reads of streaming steps (hits and reads, for metrics and tests). */
  sharedReads?: SharedStepReads;
  /** Sources (stream_generator, ...): definitions, runtimes, stats. */
  sources?: SourceService;
  /** External streams (CREATE EXTERNAL STREAM): records, settings, writers. */
  externals?: ExternalStreams;
  /** Sinks (http, slack): definitions, delivery pipelines, stats. */
  sinks?: SinkService;
  /** Random streams (CREATE RANDOM STREAM): settings and generators. */
  randoms?: RandomStreams;
  /** Dictionaries (CREATE DICTIONARY): records, engine dictionaries, LIFETIME reloads. */
  dictionaries?: DictionaryStore;
  /** User-defined functions (JavaScript and remote): catalog records and engine files. */
  udfs?: UdfService;
  /** External tables (s3): records, read tables, credentials. */
  externalTables?: ExternalTables;
  /** Format schemas (CREATE FORMAT SCHEMA): records and their files. */
  formatSchemas?: FormatSchemas;
  /** When the server started (epoch milliseconds). */
  bootedAt: number;
}
