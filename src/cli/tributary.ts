import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../api/server.ts';
import type { Services } from '../api/services.ts';
import { readVersionInfo } from '../api/version-info.ts';
import { SYSTEM_ACTOR } from '../catalog/audit.ts';
import { EngineCatalog } from '../catalog/engine-catalog.ts';
import { ensureInitialAdmin, type InitialAdmin } from '../catalog/initial-admin.ts';
import { UserStore } from '../catalog/user-store.ts';
import { WorkspaceStore } from '../catalog/workspace-store.ts';
import type { Config } from '../config/config.ts';
import { ChdbEngine } from '../engine/chdb-engine.ts';
import type { Logger } from '../log/logger.ts';
import { EngineSqlPlanner } from '../queries/engine-sql-planner.ts';
import { QueryRegistry } from '../queries/query-registry.ts';

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
  ) {}

  static async open(config: Config, logger: Logger): Promise<Tributary> {
    await mkdir(config.dataDir, { recursive: true });
    const engine = new ChdbEngine({
      dataPath: join(config.dataDir, 'engine'),
      sessions: { system: config.engineSystemSessions, user: config.engineUserSessions },
    });
    try {
      const catalog = await EngineCatalog.open(engine);
      const users = new UserStore(catalog);
      const workspace = new WorkspaceStore(catalog);
      await workspace.ensure(SYSTEM_ACTOR);
      const initialAdmin = await ensureInitialAdmin(users, config.dataDir, config.adminPassword);
      const services: Services = {
        config,
        logger,
        engine,
        catalog,
        users,
        workspace,
        version: readVersionInfo(),
        planner: new EngineSqlPlanner(engine),
        queries: new QueryRegistry(),
        bootedAt: Date.now(),
      };
      const api = buildServer(services);
      await api.ready();
      return new Tributary(services, api, initialAdmin);
    } catch (e) {
      await engine.close();
      throw e;
    }
  }

  /** Open the listening socket; answers the address it listens on. */
  async listen(): Promise<string> {
    const { port, host } = this.services.config;
    return this.api.listen({ port, host });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.services.queries.closeAll();
    await this.api.close();
    await this.services.engine.close();
  }
}
