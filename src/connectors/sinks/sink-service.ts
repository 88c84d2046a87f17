import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Actor } from '../../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../../catalog/catalog.ts';
import { SerialQueue } from '../../catalog/serial-queue.ts';
import type { Engine } from '../../engine/engine.ts';
import { err, isTributaryError } from '../../errors/tributary-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { Plan, RowsPlan } from '../../queries/execution.ts';
import type { ResultColumn } from '../../queries/query-types.ts';
import { parseQuery } from '../../sql/parser/parse.ts';
import { FileCheckpointStore } from '../../streaming/checkpoint/file-checkpoint-store.ts';
import { durabilityRefusal } from '../../streaming/durability-refusal.ts';
import { StreamingExecution } from '../../streaming/streaming-execution.ts';
import { tableReferences } from '../../streaming/view-references.ts';
import {
  DEFAULT_RETRY,
  MaterializedViewRunner,
  type RetryPolicy,
} from '../../views/materialized-view-runner.ts';
import { PauseGate } from '../../views/pause-gate.ts';
import { parseDuration } from '../sources/source-properties.ts';
import { SourceStats } from '../sources/source-stats.ts';
import { DeliveredMark } from './delivered-mark.ts';
import { DeliveryWriter } from './delivery-writer.ts';
import { SinkLog } from './sink-log.ts';
import { checkSinkType, maskedProperties, type SinkType, sinkDelivery } from './sink-properties.ts';
import { type SinkStatsBody, sinkStatsBody } from './sink-stats.ts';

export const SINK_KIND = 'sink';

/** A sink as the catalog keeps it (key: id). `running` is the desired state, restored at start. */
export interface SinkDefinition {
  readonly id: string;
  readonly name: string;
  readonly type: SinkType;
  readonly db: string;
  readonly query: string;
  readonly properties: Record<string, unknown>;
  readonly description: string;
  readonly running: boolean;
}

export interface SinkInput {
  name?: string;
  type?: string;
  query?: string;
  properties?: Record<string, unknown>;
  description?: string;
}

/** A sink as the topology graph shows it. */
export interface SinkTopologyNode {
  id: string;
  name: string;
  type: string;
  db: string;
  status: string;
  /** `db.name` of the streams and views its query reads. */
  reads: string[];
  ownership: Actor;
}

const NAME_RULE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

interface Running {
  runner: MaterializedViewRunner;
  writer: DeliveryWriter;
  startedAt: number;
}

export interface SinkServiceDeps {
  engine: Engine;
  catalog: Catalog;
  /** Plans SQL as POST /queries does. */
  plan(sql: string): Promise<Plan>;
  defaultDatabase: string;
  /** Checkpoints under `<dataDir>/checkpoints/sink_<id>/`, delivered marks under `<dataDir>/deliveries/`. */
  dataDir?: string;
  logger?: Logger;
  retry?: RetryPolicy;
}

/**
 * Sinks (spec operations 49-55): a sink is a materialized view over its query whose target is a
 * delivery writer (delivery-writer.ts) instead of a stream. It runs with the same runner and
 * checkpoints as a materialized view, so a stop, a restart or a crash resumes where it was and
 * resends only what the receiver has not acknowledged.
 */
export class SinkService {
  private readonly running = new Map<string, Running>();
  private readonly stats = new Map<string, SourceStats>();
  private readonly logs = new Map<string, SinkLog>();
  /** Changes run one at a time (a PATCH racing a stop must not leave an old pipeline running). */
  private readonly serial = new SerialQueue();
  private closed = false;

  constructor(private readonly deps: SinkServiceDeps) {}

  list(): Array<Record<string, unknown>> {
    return this.records().map((r) => this.view(r));
  }

  get(id: string): Record<string, unknown> {
    return this.view(this.require(id));
  }

  async create(input: SinkInput, actor: Actor): Promise<Record<string, unknown>> {
    return this.serial.run(async () => {
      const def = await this.check(input, randomUUID());
      if (this.records().some((r) => r.value.name === def.name))
        throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Sink', name: def.name });
      const record = await this.deps.catalog.create<SinkDefinition>(
        SINK_KIND,
        def.id,
        { ...def, running: true },
        actor,
      );
      await this.startSink(record.value);
      return this.get(def.id);
    });
  }

  /**
   * PATCH (`replace` false: name, description, properties; absent ones keep their value) or PUT
   * (the create body). The pipeline restarts; it keeps its checkpoint unless the query changed
   * (a new query starts from the latest rows, as a new sink would).
   */
  async update(
    ref: string,
    input: SinkInput,
    actor: Actor,
    replace: boolean,
  ): Promise<Record<string, unknown>> {
    return this.serial.run(async () => {
      const { key: id, value: current } = this.require(ref);
      const merged: SinkInput = replace
        ? input
        : {
            name: input.name ?? current.name,
            type: current.type,
            query: current.query,
            properties: input.properties ?? current.properties,
            description: input.description ?? current.description,
          };
      const def = await this.check(merged, id);
      if (this.records().some((r) => r.value.name === def.name && r.key !== id))
        throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Sink', name: def.name });
      const wasRunning = this.running.has(id) || current.running;
      await this.stopSink(id);
      if (def.query !== current.query) await this.forgetProgress(id);
      const record = await this.deps.catalog.update<SinkDefinition>(
        SINK_KIND,
        id,
        { ...def, running: wasRunning },
        actor,
      );
      if (wasRunning) await this.startSink(record.value);
      return this.get(id);
    });
  }

  async delete(ref: string): Promise<void> {
    return this.serial.run(async () => {
      const id = this.require(ref).key;
      await this.stopSink(id);
      await this.forgetProgress(id);
      this.stats.delete(id);
      this.logs.delete(id);
      await this.deps.catalog.delete(SINK_KIND, id);
    });
  }

  /** Start again from where it stopped (its checkpoint). */
  async start(ref: string, actor: Actor): Promise<void> {
    return this.serial.run(async () => {
      const { key: id, value: def } = this.require(ref);
      const record = await this.deps.catalog.put<SinkDefinition>(
        SINK_KIND,
        id,
        { ...def, running: true },
        actor,
      );
      await this.startSink(record.value);
    });
  }

  /** Stop sending and stop the underlying view; its checkpoint and delivered mark stay. */
  async stop(ref: string, actor: Actor): Promise<void> {
    return this.serial.run(async () => {
      const { key: id, value: def } = this.require(ref);
      await this.stopSink(id);
      await this.deps.catalog.put(SINK_KIND, id, { ...def, running: false }, actor);
    });
  }

  statsOf(ref: string, metricsRange: string, errorRange: string): SinkStatsBody {
    const id = this.require(ref).key;
    const metrics = parseDuration(metricsRange, 'metrics_time_range');
    const errors = parseDuration(errorRange, 'error_log_time_range');
    const r = this.running.get(id);
    const base = (this.stats.get(id) ?? new SourceStats()).snapshot(metrics, errors);
    const lag = r?.runner.current?.progress().sources ?? [];
    return sinkStatsBody(base, {
      status: r ? r.runner.status : 'Suspended',
      message: this.message(id),
      startedAt: r?.startedAt,
      lastWriteAt: r?.writer.counters.lastWriteAt ?? 0,
      lagging: lag.reduce((s, l) => s + Math.max(0, l.committedSn - l.processedSn), 0),
    });
  }

  /** The last `lines` lines of the sink's log (GET .../logs). */
  logsOf(ref: string, lines: number): string[] {
    const id = this.require(ref).key;
    return this.logOf(id).tail(lines);
  }

  private logOf(id: string): SinkLog {
    let log = this.logs.get(id);
    if (!log) {
      log = new SinkLog();
      this.logs.set(id, log);
    }
    return log;
  }

  /** `success_count`/`failure_count` per sink name (the Query object's `sinks`). */
  counts(): Record<string, { success_count: number; failure_count: number }> {
    const out: Record<string, { success_count: number; failure_count: number }> = {};
    for (const r of this.records()) {
      const s = this.stats.get(r.key);
      out[r.value.name] = { success_count: s?.success ?? 0, failure_count: s?.failure ?? 0 };
    }
    return out;
  }

  /** Sinks marked running start again with the server. */
  restore(): void {
    for (const r of this.records())
      if (r.value.running)
        this.startSink(r.value).catch((e: unknown) =>
          this.deps.logger?.error({ err: e, sink: r.value.name }, 'sink: could not start'),
        );
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.running.keys()].map((id) => this.stopSink(id)));
  }

  /** Names of the sinks whose query reads `db.name` (such a stream is not dropped under them). */
  readersOf(db: string, name: string): string[] {
    return this.records()
      .filter((r) => readsOf(r.value).includes(`${db}.${name}`))
      .map((r) => r.value.name);
  }

  /** Refuse (RESOURCE_IN_USE) while a sink's query reads stream or view `db.name`. */
  assertNoReaders(db: string, name: string): void {
    const readers = this.readersOf(db, name);
    if (readers.length > 0)
      throw err('RESOURCE_IN_USE', {
        kind: 'Stream',
        name: db === this.deps.defaultDatabase ? name : `${db}.${name}`,
        users: `${readers.map((r) => `sink ${r}`).join(', ')} (delete the sink first)`,
      });
  }

  topology(): SinkTopologyNode[] {
    return this.records().map((r) => ({
      id: r.value.id,
      name: r.value.name,
      type: r.value.type,
      db: r.value.db,
      status: this.status(r.value),
      reads: readsOf(r.value),
      ownership: r.audit.created_by,
    }));
  }

  // ---- internals ----

  private records(): CatalogRecord<SinkDefinition>[] {
    return this.deps.catalog
      .list<SinkDefinition>(SINK_KIND)
      .sort((a, b) => a.value.name.localeCompare(b.value.name));
  }

  private require(id: string): CatalogRecord<SinkDefinition> {
    const r =
      this.deps.catalog.get<SinkDefinition>(SINK_KIND, id) ?? this.records().find((x) => x.value.name === id);
    if (!r) throw err('RESOURCE_NOT_FOUND', { kind: 'Sink', name: id });
    return r;
  }

  private async check(input: SinkInput, id: string): Promise<SinkDefinition> {
    if (typeof input.name !== 'string' || !NAME_RULE.test(input.name))
      throw err('SINK_BAD_PROPERTY', {
        property: 'name',
        detail: 'at most 64 letters, digits or underscores, starting with a letter',
      });
    const type = checkSinkType(input.type);
    if (typeof input.query !== 'string' || input.query.trim().length === 0)
      throw err('SINK_BAD_PROPERTY', {
        property: 'query',
        detail: 'the streaming SELECT whose results the sink sends is required',
      });
    const made = sinkDelivery(type, input.properties ?? {});
    const header = await this.streamingHeader(input.query);
    const names = new Set(header.map((c) => c.name));
    for (const c of made.templateColumns)
      if (!names.has(c))
        throw err('SINK_BAD_PROPERTY', {
          property: type === 'slack' ? 'properties.messages' : 'properties.body_template',
          detail: `the template uses {{.${c}}} but the query has no column ${c} (it has ${[...names].join(', ')})`,
        });
    return {
      id,
      name: input.name,
      type,
      db: this.deps.defaultDatabase,
      query: input.query.trim(),
      properties: input.properties ?? {},
      description: input.description ?? '',
      running: false,
    };
  }

  /** Plan the query once (not run): it must be a streaming query the executor can checkpoint. */
  private async streamingHeader(sql: string): Promise<ResultColumn[]> {
    let plan: Plan;
    try {
      plan = await this.deps.plan(sql);
    } catch (e) {
      if (isTributaryError(e)) throw e;
      throw err('SINK_BAD_PROPERTY', {
        property: 'query',
        detail: e instanceof Error ? e.message : String(e),
      });
    }
    if (plan.kind !== 'rows' || !plan.streaming) {
      if (plan.kind === 'rows') await plan.dispose?.();
      throw err('SINK_BAD_PROPERTY', {
        property: 'query',
        detail: 'a sink’s query must be a streaming SELECT (it reads a stream, not table(...))',
      });
    }
    try {
      const refusal =
        this.deps.dataDir && plan instanceof StreamingExecution ? durabilityRefusal(plan.program) : undefined;
      if (refusal)
        throw err('SINK_BAD_PROPERTY', {
          property: 'query',
          detail: `a sink resumes exactly where it was after a restart, and ${refusal}`,
        });
      return plan.header;
    } finally {
      await plan.dispose?.();
    }
  }

  private checkpointStore(id: string): FileCheckpointStore | undefined {
    if (!this.deps.dataDir) return undefined;
    return new FileCheckpointStore(this.deps.engine, this.deps.dataDir, `sink_${id}`);
  }

  private mark(id: string): DeliveredMark | undefined {
    if (!this.deps.dataDir) return undefined;
    return new DeliveredMark(join(this.deps.dataDir, 'deliveries', `sink_${id}.json`));
  }

  private async forgetProgress(id: string): Promise<void> {
    await this.checkpointStore(id)?.destroy();
    await this.mark(id)?.destroy();
  }

  /**
   * Start the sink's pipeline; resolves once its query is planned and running (rows committed from
   * then on are delivered), or has failed (it retries with backoff).
   */
  private async startSink(def: SinkDefinition): Promise<void> {
    if (this.closed || this.running.has(def.id)) return;
    const stats = this.stats.get(def.id) ?? new SourceStats();
    this.stats.set(def.id, stats);
    stats.startedAt = Date.now();
    const { delivery, backoff } = sinkDelivery(def.type, def.properties);
    const gate = new PauseGate();
    const mark = this.mark(def.id);
    const writer = new DeliveryWriter({
      owner: def.id,
      delivery,
      backoff,
      stats: this.logOf(def.id).recording(stats),
      gate,
      ...(mark ? { mark } : {}),
      ...(this.deps.logger ? { logger: this.deps.logger } : {}),
    });
    const store = this.checkpointStore(def.id);
    const runner = new MaterializedViewRunner({
      key: `sink ${def.name}`,
      gate,
      sink: writer,
      retry: this.deps.retry ?? DEFAULT_RETRY,
      ...(store ? { durability: { store, checkpointIntervalMs: 5000 } } : {}),
      ...(this.deps.logger ? { logger: this.deps.logger } : {}),
      plan: async () => {
        const plan = await this.deps.plan(def.query);
        if (plan.kind !== 'rows' || !plan.streaming) {
          if (plan.kind === 'rows') await plan.dispose?.();
          throw err('INCORRECT_QUERY', { detail: 'a sink’s query must be a streaming SELECT' });
        }
        writer.setHeader(plan.header);
        return plan as RowsPlan;
      },
    });
    this.running.set(def.id, { runner, writer, startedAt: Date.now() });
    const log = this.logOf(def.id);
    log.info(`starting: ${def.type} sink ${def.name} (${delivery.describe})`);
    runner.start();
    await runner.settledAfterResume();
    if (runner.status === 'Error') log.warn(`its query failed (retrying): ${runner.lastError.message}`);
    else log.info(`running: ${def.query}`);
  }

  private async stopSink(id: string): Promise<void> {
    const r = this.running.get(id);
    if (!r) return;
    this.running.delete(id);
    r.writer.close();
    await r.runner.stop();
    this.logOf(id).info('stopped');
    const stats = this.stats.get(id);
    if (stats) stats.startedAt = undefined;
  }

  /** `running` (executing, or retrying a failing receiver), `failed` (its query failed; retrying), `stopped`. */
  private status(def: SinkDefinition): string {
    const r = this.running.get(def.id);
    if (!r) return 'stopped';
    return r.runner.status === 'Error' ? 'failed' : 'running';
  }

  private message(id: string): string {
    const r = this.running.get(id);
    return r?.writer.lastError?.message ?? (r?.runner.status === 'Error' ? r.runner.lastError.message : '');
  }

  private view(r: CatalogRecord<SinkDefinition>): Record<string, unknown> {
    const d = r.value;
    const running = this.running.get(d.id);
    return {
      id: d.id,
      name: d.name,
      type: d.type,
      query: d.query,
      properties: maskedProperties(d.properties),
      description: d.description,
      status: this.status(d),
      message: this.message(d.id),
      start_time: running?.startedAt ?? 0,
      created_at: r.audit.created_at,
      created_by: r.audit.created_by,
      last_updated_at: r.audit.last_updated_at,
      last_updated_by: r.audit.last_updated_by,
    };
  }
}

/** `db.name` of what a sink's query reads (empty when it does not parse). */
function readsOf(def: SinkDefinition): string[] {
  try {
    return tableReferences(parseQuery(def.query)).map((t) => `${t.database ?? def.db}.${t.name}`);
  } catch {
    return [];
  }
}
