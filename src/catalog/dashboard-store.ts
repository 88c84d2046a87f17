import { randomUUID } from 'node:crypto';
import { err } from '../errors/tributary-error.ts';
import type { Actor, Audit } from './audit.ts';
import type { Catalog, CatalogRecord } from './catalog.ts';
import { SerialQueue } from './serial-queue.ts';

/** A panel of a dashboard, the contract's `dashboard.Panel`; every field optional but `id`. */
export interface Panel {
  id: string;
  title?: string;
  description?: string;
  /** e.g. `chart`, `markdown`. */
  viz_type?: string;
  /** The SQL of a chart, the text of a markdown panel. */
  viz_content?: string;
  /** e.g. `{"x":0,"y":0,"w":6,"h":2}`. */
  position?: Record<string, unknown>;
  viz_config?: Record<string, unknown>;
}

export type PanelInput = Omit<Panel, 'id'> & { id?: string };

interface StoredDashboard {
  id: string;
  name: string;
  description: string;
  panels: Panel[];
}

/** The contract's `dashboard.Dashboard`. */
export type Dashboard = StoredDashboard & Audit;

export interface DashboardInput {
  name: string;
  description?: string;
  panels?: PanelInput[];
}

export const DASHBOARD_KIND = 'dashboard';

/** A panel sent without an id gets one, so that clients can address it later. */
function withIds(panels: PanelInput[]): Panel[] {
  return panels.map((p) => ({ ...p, id: p.id ?? randomUUID() }));
}

/**
 * Dashboards, kept in the catalog under their id (a UUID). Names need not be unique: dashboards
 * are addressed by id, and the Timeplus console creates several "Untitled dashboard"s.
 */
export class DashboardStore {
  private readonly writes = new SerialQueue();

  constructor(private readonly catalog: Catalog) {}

  list(): Dashboard[] {
    return this.catalog.list<StoredDashboard>(DASHBOARD_KIND).map(view);
  }

  get(id: string): Dashboard {
    return view(this.record(id));
  }

  create(input: DashboardInput, actor: Actor): Promise<Dashboard> {
    const id = randomUUID();
    const stored: StoredDashboard = {
      id,
      name: input.name,
      description: input.description ?? '',
      panels: withIds(input.panels ?? []),
    };
    return this.writes.run(async () => view(await this.catalog.create(DASHBOARD_KIND, id, stored, actor)));
  }

  /** Replace the name; a description or panels left out keep their value. */
  update(id: string, input: DashboardInput, actor: Actor): Promise<Dashboard> {
    return this.writes.run(async () => {
      const current = this.record(id).value;
      const next: StoredDashboard = {
        id,
        name: input.name,
        description: input.description ?? current.description,
        panels: input.panels ? withIds(input.panels) : current.panels,
      };
      return view(await this.catalog.update(DASHBOARD_KIND, id, next, actor));
    });
  }

  delete(id: string): Promise<void> {
    return this.writes.run(async () => {
      if (!(await this.catalog.delete(DASHBOARD_KIND, id))) throw notFound(id);
    });
  }

  private record(id: string): CatalogRecord<StoredDashboard> {
    const r = this.catalog.get<StoredDashboard>(DASHBOARD_KIND, id);
    if (!r) throw notFound(id);
    return r;
  }
}

const notFound = (id: string) => err('RESOURCE_NOT_FOUND', { kind: 'Dashboard', name: id });

function view(r: CatalogRecord<StoredDashboard>): Dashboard {
  return { ...r.value, ...r.audit };
}
