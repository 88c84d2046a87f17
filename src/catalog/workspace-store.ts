import type { Actor, Audit } from './audit.ts';
import type { Catalog } from './catalog.ts';

export interface WorkspaceSettings {
  name: string;
  enabled_user_tracking: boolean;
}

/** The Workspace shape of the contract; the self-hosted workspace is always `default`. */
export interface Workspace extends Audit {
  id: string;
  name: string;
  free_trial_end_date: string;
  settings: WorkspaceSettings & Audit;
}

const KEY = 'default';

/** The one workspace and its settings, kept in the catalog. */
export class WorkspaceStore {
  constructor(private readonly catalog: Catalog) {}

  /** Create the workspace record on first start. */
  async ensure(actor: Actor): Promise<void> {
    if (!this.catalog.get('workspace', KEY)) {
      await this.catalog.create<WorkspaceSettings>(
        'workspace',
        KEY,
        { name: KEY, enabled_user_tracking: false },
        actor,
      );
    }
  }

  get(): Workspace {
    const r = this.catalog.get<WorkspaceSettings>('workspace', KEY);
    if (!r) throw new Error('workspace record missing; ensure() was not called');
    return {
      id: KEY,
      name: KEY,
      free_trial_end_date: '',
      ...r.audit,
      settings: { ...r.value, ...r.audit },
    };
  }

  async updateSettings(
    patch: Partial<Pick<WorkspaceSettings, 'enabled_user_tracking'>>,
    actor: Actor,
  ): Promise<Workspace> {
    const current = this.catalog.get<WorkspaceSettings>('workspace', KEY);
    const next: WorkspaceSettings = {
      name: KEY,
      enabled_user_tracking: current?.value.enabled_user_tracking ?? false,
      ...patch,
    };
    await this.catalog.put('workspace', KEY, next, actor);
    return this.get();
  }
}
