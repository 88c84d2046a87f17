import { randomUUID } from 'node:crypto';
import type { Actor } from '../../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../../catalog/catalog.ts';
import { err } from '../../errors/tributary-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import { templateEvent } from './generator-templates.ts';
import { previewEvents } from './source-preview.ts';
import {
  checkProperties,
  checkType,
  parseDuration,
  type SourceType,
  streamGeneratorProperties,
} from './source-properties.ts';
import type { SourceRuntime, SourceWriter } from './source-runtime.ts';
import { sourceRuntime } from './source-runtimes.ts';
import { SourceStats, type SourceStatsBody } from './source-stats.ts';

export const SOURCE_KIND = 'source';

/** A source as the catalog keeps it (key: id). `running` is the desired state: restored at start. */
export interface SourceDefinition {
  readonly id: string;
  readonly name: string;
  readonly type: SourceType;
  readonly db: string;
  readonly stream: string;
  readonly properties: Record<string, unknown>;
  readonly description: string;
  readonly running: boolean;
}

export interface SourceInput {
  name?: string;
  type?: string;
  stream?: string;
  properties?: Record<string, unknown>;
  description?: string;
}

const NAME_RULE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** A source as the topology graph shows it. */
export interface SourceTopologyNode {
  id: string;
  name: string;
  type: string;
  db: string;
  stream: string;
  status: string;
  ownership: Actor;
}

/**
 * Sources (spec operations 56-62): definitions in the catalog, one runtime per running source
 * writing into its target stream through the normal ingest path, stats per source. Sources marked
 * running start again with the server (`restore`).
 */
export class SourceService {
  private readonly runtimes = new Map<string, SourceRuntime>();
  private readonly stats = new Map<string, SourceStats>();

  constructor(
    private readonly deps: {
      catalog: Catalog;
      streams: StreamStore;
      defaultDatabase: string;
      logger?: Logger;
    },
  ) {}

  list(): Array<Record<string, unknown>> {
    return this.records().map((r) => this.view(r));
  }

  get(id: string): Record<string, unknown> {
    return this.view(this.require(id));
  }

  async create(input: SourceInput, actor: Actor): Promise<Record<string, unknown>> {
    const def = this.check(input, randomUUID());
    if (this.records().some((r) => r.value.name === def.name))
      throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Source', name: def.name });
    const record = await this.deps.catalog.create<SourceDefinition>(SOURCE_KIND, def.id, def, actor);
    this.startRuntime(record.value);
    await this.deps.catalog.put(SOURCE_KIND, def.id, { ...def, running: true }, actor);
    return this.get(def.id);
  }

  /** PATCH (`replace` false: fields absent keep their value) or PUT; only while stopped. */
  async update(
    id: string,
    input: SourceInput,
    actor: Actor,
    replace: boolean,
  ): Promise<Record<string, unknown>> {
    const current = this.require(id).value;
    if (this.runtimes.has(id)) throw err('SOURCE_RUNNING', { name: current.name });
    const merged: SourceInput = replace
      ? { type: current.type, ...input }
      : {
          name: input.name ?? current.name,
          type: current.type,
          stream: input.stream ?? current.stream,
          properties: input.properties ?? current.properties,
          description: input.description ?? current.description,
        };
    const def = { ...this.check(merged, id), running: false };
    if (this.records().some((r) => r.value.name === def.name && r.key !== id))
      throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Source', name: def.name });
    await this.deps.catalog.update(SOURCE_KIND, id, def, actor);
    return this.get(id);
  }

  async delete(id: string): Promise<void> {
    this.require(id);
    await this.stopRuntime(id);
    this.stats.delete(id);
    await this.deps.catalog.delete(SOURCE_KIND, id);
  }

  async start(id: string, actor: Actor): Promise<void> {
    const def = this.require(id).value;
    if (!this.runtimes.has(id)) this.startRuntime(def);
    await this.deps.catalog.put(SOURCE_KIND, id, { ...def, running: true }, actor);
  }

  async stop(id: string, actor: Actor): Promise<void> {
    const def = this.require(id).value;
    await this.stopRuntime(id);
    await this.deps.catalog.put(SOURCE_KIND, id, { ...def, running: false }, actor);
  }

  statsOf(id: string, metricsRange: string, errorRange: string): SourceStatsBody {
    this.require(id);
    const metrics = parseDuration(metricsRange, 'metrics_time_range');
    const errors = parseDuration(errorRange, 'error_log_time_range');
    return (this.stats.get(id) ?? new SourceStats()).snapshot(metrics, errors);
  }

  /**
   * Operation 56: up to `size` events of a source's type and properties, read for at most
   * `timeout` (default 10 s), without writing anything (a JetStream preview reads with an
   * ephemeral consumer and acknowledges nothing).
   */
  async preview(input: {
    type?: string;
    properties?: Record<string, unknown>;
    size?: number;
    timeout?: string;
  }): Promise<unknown[]> {
    const type = checkType(input.type);
    const properties = checkProperties(type, input.properties, 'preview');
    const size = Math.min(Math.max(1, Math.floor(input.size ?? 1)), 1000);
    const timeoutMs = input.timeout ? parseDuration(input.timeout, 'timeout') : 10_000;
    if (type === 'stream_generator') {
      const p = streamGeneratorProperties(properties);
      return Array.from({ length: size }, () => templateEvent(p.template));
    }
    return previewEvents(type, properties, size, Math.min(timeoutMs, 60_000));
  }

  /** Sources that were running when the server stopped start again. */
  restore(): void {
    for (const r of this.records()) if (r.value.running) this.startRuntime(r.value);
  }

  async close(): Promise<void> {
    for (const id of [...this.runtimes.keys()]) await this.stopRuntime(id);
  }

  /** Names of the sources writing into stream `db.name` (a stream they write cannot be dropped). */
  writersOf(db: string, name: string): string[] {
    return this.records()
      .filter((r) => r.value.db === db && r.value.stream === name)
      .map((r) => r.value.name);
  }

  /** Refuse (RESOURCE_IN_USE) while a source writes into stream `db.name`. */
  assertNoWriters(db: string, name: string): void {
    const writers = this.writersOf(db, name);
    if (writers.length > 0)
      throw err('RESOURCE_IN_USE', {
        kind: 'Stream',
        name: db === 'default' ? name : `${db}.${name}`,
        users: `${writers.map((w) => `source ${w}`).join(', ')} (delete the source first)`,
      });
  }

  /** Every source as the topology shows it. */
  topology(): SourceTopologyNode[] {
    return this.records().map((r) => ({
      id: r.value.id,
      name: r.value.name,
      type: r.value.type,
      db: r.value.db,
      stream: r.value.stream,
      status: this.runtimes.has(r.value.id) ? 'running' : 'stopped',
      ownership: r.audit.created_by,
    }));
  }

  private records(): CatalogRecord<SourceDefinition>[] {
    return this.deps.catalog
      .list<SourceDefinition>(SOURCE_KIND)
      .sort((a, b) => a.value.name.localeCompare(b.value.name));
  }

  private require(id: string): CatalogRecord<SourceDefinition> {
    const r =
      this.deps.catalog.get<SourceDefinition>(SOURCE_KIND, id) ??
      this.records().find((x) => x.value.name === id);
    if (!r) throw err('RESOURCE_NOT_FOUND', { kind: 'Source', name: id });
    return r;
  }

  private check(input: SourceInput, id: string): SourceDefinition {
    if (typeof input.name !== 'string' || !NAME_RULE.test(input.name))
      throw err('SOURCE_BAD_PROPERTY', {
        property: 'name',
        detail: 'at most 64 letters, digits or underscores, starting with a letter',
      });
    const type = checkType(input.type);
    if (typeof input.stream !== 'string' || input.stream.length === 0)
      throw err('SOURCE_BAD_PROPERTY', { property: 'stream', detail: 'the target stream is required' });
    const db = this.deps.defaultDatabase;
    if (!this.deps.streams.get(db, input.stream))
      throw err('SOURCE_BAD_PROPERTY', {
        property: 'stream',
        detail: `stream ${input.stream} does not exist`,
      });
    const properties = checkProperties(type, input.properties, input.name);
    return {
      id,
      name: input.name,
      type,
      db,
      stream: input.stream,
      properties,
      description: input.description ?? '',
      running: false,
    };
  }

  private startRuntime(def: SourceDefinition): void {
    const stats = this.stats.get(def.id) ?? new SourceStats();
    this.stats.set(def.id, stats);
    stats.startedAt = Date.now();
    const writer: SourceWriter = {
      write: async (events, idempotencyId) => {
        try {
          await this.deps.streams.ingest(
            def.db,
            def.stream,
            { objects: events },
            idempotencyId ? { idempotencyId } : {},
          );
          stats.recordSuccess(events.length, Buffer.byteLength(JSON.stringify(events)));
        } catch (e) {
          stats.recordFailure(events.length, (e as Error).message);
          this.deps.logger?.warn({ err: e, source: def.name }, 'source: write failed');
          throw e;
        }
      },
      reject: (events, message) => stats.recordFailure(events, message),
      report: (message) => {
        stats.recordFailure(0, message);
        this.deps.logger?.warn({ source: def.name }, `source: ${message}`);
      },
    };
    const runtime = sourceRuntime(def, writer);
    runtime.start();
    this.runtimes.set(def.id, runtime);
  }

  private async stopRuntime(id: string): Promise<void> {
    const runtime = this.runtimes.get(id);
    this.runtimes.delete(id);
    await runtime?.stop();
    const stats = this.stats.get(id);
    if (stats) stats.startedAt = undefined;
  }

  private view(r: CatalogRecord<SourceDefinition>): Record<string, unknown> {
    const d = r.value;
    const stats = this.stats.get(d.id);
    const running = this.runtimes.has(d.id);
    return {
      id: d.id,
      name: d.name,
      type: d.type,
      stream: d.stream,
      properties: d.properties,
      description: d.description,
      status: running ? 'running' : 'stopped',
      message: stats?.lastError?.message ?? '',
      start_time: running && stats?.startedAt ? stats.startedAt : 0,
      created_at: r.audit.created_at,
      created_by: r.audit.created_by,
      last_updated_at: r.audit.last_updated_at,
      last_updated_by: r.audit.last_updated_by,
    };
  }
}
