import type { Catalog } from '../catalog/catalog.ts';
import type { UserStore } from '../catalog/user-store.ts';
import type { WorkspaceStore } from '../catalog/workspace-store.ts';
import type { Config } from '../config/config.ts';
import type { Engine } from '../engine/engine.ts';
import type { Logger } from '../log/logger.ts';
import type { VersionInfo } from './version-info.ts';

/** Everything the HTTP layer calls into. Built once by `src/cli/tributary.ts`. */
export interface Services {
  config: Config;
  logger: Logger;
  engine: Engine;
  catalog: Catalog;
  users: UserStore;
  workspace: WorkspaceStore;
  version: VersionInfo;
  /** When the server started (epoch milliseconds). */
  bootedAt: number;
}
