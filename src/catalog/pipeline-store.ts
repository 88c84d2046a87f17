import { randomUUID } from 'node:crypto';
import { err } from '../errors/tributary-error.ts';
import { type Actor, type Audit, auditTimestamp } from './audit.ts';
import type { Catalog, CatalogRecord } from './catalog.ts';
import { SerialQueue } from './serial-queue.ts';

/** One state of a pipeline's graph: the contract's `PipelineNode`. */
export interface PipelineNodes {
  nodes: unknown[];
  update_time: string;
}

export type PipelineNodesInput = { nodes?: unknown[]; update_time?: string };

interface StoredPipeline {
  id: string;
  name: string;
  description: string;
  nodes_history: PipelineNodes[];
}

/** The contract's `Pipeline`. */
export type Pipeline = StoredPipeline & Audit;

export interface PipelineInput {
  name: string;
  description: string;
  nodes_history: PipelineNodesInput[];
}

export const PIPELINE_KIND = 'pipeline';

/** Most states a pipeline keeps; an append past it drops the oldest. */
export const MAX_PIPELINE_HISTORY = 1000;

function nodesOf(input: PipelineNodesInput, now: Date): PipelineNodes {
  return { nodes: input.nodes ?? [], update_time: input.update_time ?? auditTimestamp(now) };
}

/**
 * Pipelines (the console's saved graphs of nodes), kept in the catalog under their id (a UUID).
 * Names are unique: the contract's get route describes its parameter as the pipeline's name, so a
 * pipeline is found by id or by name, and a second pipeline of the same name answers 409.
 */
export class PipelineStore {
  private readonly writes = new SerialQueue();

  constructor(private readonly catalog: Catalog) {}

  list(): Pipeline[] {
    return this.catalog.list<StoredPipeline>(PIPELINE_KIND).map(view);
  }

  /** By id, else by name. */
  get(idOrName: string): Pipeline {
    return view(this.record(idOrName));
  }

  create(input: PipelineInput, actor: Actor): Promise<Pipeline> {
    return this.writes.run(async () => {
      if (this.byName(input.name))
        throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Pipeline', name: input.name });
      const id = randomUUID();
      const now = new Date();
      const stored: StoredPipeline = {
        id,
        name: input.name,
        description: input.description,
        nodes_history: input.nodes_history.map((n) => nodesOf(n, now)).slice(-MAX_PIPELINE_HISTORY),
      };
      return view(await this.catalog.create(PIPELINE_KIND, id, stored, actor));
    });
  }

  /** Add a state of the graph at the end of the history. */
  append(idOrName: string, input: PipelineNodesInput, actor: Actor): Promise<Pipeline> {
    return this.writes.run(async () => {
      const current = this.record(idOrName).value;
      const next: StoredPipeline = {
        ...current,
        nodes_history: [...current.nodes_history, nodesOf(input, new Date())].slice(-MAX_PIPELINE_HISTORY),
      };
      return view(await this.catalog.update(PIPELINE_KIND, current.id, next, actor));
    });
  }

  delete(idOrName: string): Promise<void> {
    return this.writes.run(async () => {
      await this.catalog.delete(PIPELINE_KIND, this.record(idOrName).value.id);
    });
  }

  private byName(name: string): CatalogRecord<StoredPipeline> | undefined {
    return this.catalog.list<StoredPipeline>(PIPELINE_KIND, (r) => r.value.name === name)[0];
  }

  private record(idOrName: string): CatalogRecord<StoredPipeline> {
    const r = this.catalog.get<StoredPipeline>(PIPELINE_KIND, idOrName) ?? this.byName(idOrName);
    if (!r) throw err('RESOURCE_NOT_FOUND', { kind: 'Pipeline', name: idOrName });
    return r;
  }
}

function view(r: CatalogRecord<StoredPipeline>): Pipeline {
  return { ...r.value, ...r.audit };
}
