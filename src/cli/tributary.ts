import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../api/server.ts';
import type { Services } from '../api/services.ts';
import { readVersionInfo } from '../api/version-info.ts';
import { SYSTEM_ACTOR } from '../catalog/audit.ts';
import { DashboardStore } from '../catalog/dashboard-store.ts';
import { EngineCatalog } from '../catalog/engine-catalog.ts';
import { ensureInitialAdmin, type InitialAdmin, initialPasswordFile } from '../catalog/initial-admin.ts';
import { PipelineStore } from '../catalog/pipeline-store.ts';
import { SavedQueryStore } from '../catalog/saved-query-store.ts';
import { UserStore } from '../catalog/user-store.ts';
import { WorkspaceStore } from '../catalog/workspace-store.ts';
import type { Config } from '../config/config.ts';
import { InputService } from '../connectors/inputs/input-service.ts';
import { RunningInputs } from '../connectors/inputs/running-inputs.ts';
import { SinkService } from '../connectors/sinks/sink-service.ts';
import { SourceService } from '../connectors/sources/source-service.ts';
import { ChdbEngine } from '../engine/chdb-engine.ts';
import { parsePublicKeys } from '../license/license-keys.ts';
import { LicenseStore } from '../license/license-store.ts';
import type { Logger } from '../log/logger.ts';
import { QueryRegistry } from '../queries/query-registry.ts';
import { translateExpression } from '../sql/translator/translate.ts';
import { StreamStore } from '../stream/stream-store.ts';
import type { BufferPolicy } from '../stream/stream-tables.ts';
import { resetStreamingState } from '../streaming/state-table.ts';
import { UdfService } from '../udf/udf-service.ts';
import type { RetryPolicy } from '../views/materialized-view-runner.ts';
import { buildPlanner } from './build-planner.ts';
import { securePrivateDir } from './data-dir.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { listenError } from './preflight.ts';
import { StartupError } from './startup-error.ts';

/** Internal knobs, not configuration: tests and benchmarks use them. */
export interface Tuning {
  /** When hybrid streams flush their Buffer (default DEFAULT_BUFFER_POLICY). */
  buffer?: BufferPolicy;
  /** The time now (default the system clock): tests move it to see license validations. */
  clock?: () => Date;
  /** Backoff of failing materialized views (default 1 s doubling to 60 s). */
  mvRetry?: RetryPolicy;
}

/** The generated first password is for reading once: remind the operator while its file is there. */
async function warnOfPasswordFile(dataDir: string, logger: Logger): Promise<void> {
  const file = initialPasswordFile(dataDir);
  try {
    await access(file);
  } catch {
    return;
  }
  logger.warn({ file }, `delete ${file} once the first admin password is stored elsewhere`);
}

/**
 * One running Tributary: the engine on the data directory, the catalog, the services above them
 * and the HTTP server. `open` starts everything but the listening socket; `listen` opens it.
 */
export class Tributary {
  private closed = false;

  private constructor(
    readonly services: Services,
    readonly api: FastifyInstance,
    readonly initialAdmin: InitialAdmin | undefined,
    private readonly unlock: () => Promise<void>,
  ) {}

  /** `tuning`: stream-store knobs for tests and benchmarks (e.g. a Buffer flushed after every insert). */
  static async open(config: Config, logger: Logger, tuning: Tuning = {}): Promise<Tributary> {
    try {
      await securePrivateDir(config.dataDir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new StartupError(`cannot use data directory ${config.dataDir}: ${code ?? (e as Error).message}`);
    }
    // One server per data directory: refused here, before the engine opens or anything is created.
    const unlock = await lockDataDir(config.dataDir);
    let engine: ChdbEngine;
    try {
      engine = new ChdbEngine({
        dataPath: join(config.dataDir, 'engine'),
        udfDir: join(config.dataDir, 'udf'),
        sessions: {
          system: config.engineSystemSessions,
          stream: config.engineStreamSessions,
          user: config.engineUserSessions,
        },
      });
    } catch (e) {
      await unlock();
      throw e;
    }
    let inputs: InputService | undefined;
    let sources: SourceService | undefined;
    let sinks: SinkService | undefined;
    try {
      const catalog = await EngineCatalog.open(engine);
      await resetStreamingState(engine);
      const users = new UserStore(catalog);
      const workspace = new WorkspaceStore(catalog);
      await workspace.ensure(SYSTEM_ACTOR);
      const initialAdmin = await ensureInitialAdmin(users, config.dataDir, config.adminPassword);
      if (!initialAdmin) await warnOfPasswordFile(config.dataDir, logger);
      const streams = await StreamStore.open({
        engine,
        catalog,
        dataDir: config.dataDir,
        logger,
        translateExpression: (sql) => translateExpression(sql),
        ...(tuning.buffer ? { buffer: tuning.buffer } : {}),
      });
      inputs = new InputService({
        catalog,
        streams,
        running: new RunningInputs({ logger }),
        defaultDatabase: 'default',
        logger,
      });
      sources = new SourceService({ catalog, streams, defaultDatabase: 'default', logger });
      const clock = tuning.clock ?? (() => new Date());
      // User-defined functions: their engine files written again from the catalog, and loaded.
      const udfs = new UdfService(catalog, engine, join(config.dataDir, 'udf'));
      await udfs.start();
      const licenseKeys = config.licensePublicKeys ? parsePublicKeys(config.licensePublicKeys) : [];
      const built = buildPlanner({
        engine,
        catalog,
        streams,
        inputs,
        sources,
        logger,
        dataDir: config.dataDir,
        ...(config.userFilesDir ? { userFilesDir: config.userFilesDir } : {}),
        udfs,
        ...(tuning.mvRetry ? { mvRetry: tuning.mvRetry } : {}),
        tailStepGapMs: config.tailStepGapMs,
        viewStepGapMs: config.viewStepGapMs,
        tailLateShare: config.tailLateShare,
      });
      sinks = new SinkService({
        engine,
        catalog,
        plan: (sql) => built.planner.plan(sql, { user: { username: 'system', role: 'admin' } }),
        defaultDatabase: 'default',
        dataDir: config.dataDir,
        logger,
        ...(tuning.mvRetry ? { retry: tuning.mvRetry } : {}),
      });
      // A stream (or view) a sink reads is not dropped under it.
      const sinkService = sinks;
      for (const object of ['STREAM', 'TABLE', 'VIEW'])
        built.dispatch.drop.wrap(object, (h) => async (s, ctx) => {
          sinkService.assertNoReaders(s.target.database ?? 'default', s.target.name);
          return h(s, ctx);
        });
      // Dictionaries' FILE sources read only inside this directory (operations.md, "User files directory").
      await mkdir(built.dictionaries.userFilesDir, { recursive: true, mode: 0o700 });
      await built.dictionaries.restore();
      // Log external streams follow their files again (from the positions they kept).
      await built.externals.start();
      const services: Services = {
        config,
        logger,
        engine,
        catalog,
        users,
        workspace,
        dashboards: new DashboardStore(catalog),
        savedQueries: new SavedQueryStore(catalog),
        pipelines: new PipelineStore(catalog),
        licenses: new LicenseStore(catalog, users, licenseKeys, clock),
        clock,
        version: readVersionInfo(),
        planner: built.planner,
        resolver: built.resolver,
        views: built.views,
        mvs: built.mvs,
        sharedReads: built.sharedReads,
        randoms: built.randoms,
        dictionaries: built.dictionaries,
        externalTables: built.externalTables,
        ...(built.formatSchemas ? { formatSchemas: built.formatSchemas } : {}),
        sources,
        sinks,
        externals: built.externals,
        queries: new QueryRegistry(),
        streams,
        inputs,
        udfs,
        bootedAt: Date.now(),
      };
      const api = buildServer(services);
      await api.ready();
      // Inputs listen again once everything they write through is up (a taken port: `failed`).
      await inputs.restore();
      // Every materialized view starts (paused ones stay paused).
      built.mvs.startAll();
      sources.restore();
      sinks.restore();
      // External tables read through engine tables made with credentials resolved now.
      await built.externalTables.refreshAll();
      return new Tributary(services, api, initialAdmin, unlock);
    } catch (e) {
      await sinks?.close();
      await sources?.close();
      await inputs?.close();
      await engine.close();
      await unlock();
      throw e;
    }
  }

  /** Open the listening socket; answers the address it is bound to (the real port when 0 was asked). */
  async listen(): Promise<string> {
    const { port, host } = this.services.config;
    try {
      await this.api.listen({ port, host });
    } catch (e) {
      throw listenError(e, host, port) ?? e;
    }
    const bound = this.api.server.address();
    if (!bound || typeof bound === 'string') return String(bound);
    const address = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    return `http://${address}:${bound.port}`;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.services.queries.closeAll();
    await this.services.sinks?.close();
    await this.services.mvs.close();
    this.services.dictionaries?.close();
    this.services.randoms?.close();
    await this.services.externals?.close();
    await this.services.sources?.close();
    await this.services.inputs?.close();
    await this.api.close();
    await this.services.streams.close();
    await this.services.engine.close();
    await this.unlock();
  }
}
