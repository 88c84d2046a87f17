import { randomUUID } from 'node:crypto';
import type { Actor } from '../catalog/audit.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Engine } from '../engine/engine.ts';
import { quoteString } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Logger } from '../log/logger.ts';
import type { Plan, RowsPlan } from '../queries/execution.ts';
import type { ResultColumn } from '../queries/query-types.ts';
import type { Query } from '../sql/ast/query.ts';
import { parseQuery } from '../sql/parser/parse.ts';
import { print } from '../sql/printer/format.ts';
import { toClickHouseType } from '../sql/types/proton-types.ts';
import type { ColumnSpec } from '../stream/define-stream.ts';
import { streamKey } from '../stream/stream-definition.ts';
import type { StreamStore } from '../stream/stream-store.ts';
import type { ViewRecord } from '../streaming/catalog-resolver.ts';
import { FileCheckpointStore } from '../streaming/checkpoint/file-checkpoint-store.ts';
import type { Durability } from '../streaming/durability.ts';
import { durablePlanRefusal, isDurablePlan } from '../streaming/durable-plan.ts';
import { qualifyReferences, tableReferences } from '../streaming/view-references.ts';
import type { ExternalTarget, ExternalTargets, ViewWriter } from './external-target.ts';
import {
  DEFAULT_RETRY,
  MaterializedViewRunner,
  type MaterializedViewStatus,
  type RetryPolicy,
} from './materialized-view-runner.ts';
import { type MaterializedViewSettings, materializedViewSettings } from './materialized-view-settings.ts';
import { PauseGate } from './pause-gate.ts';
import { TargetWriter, type WriteCounters } from './target-writer.ts';
import { VIEW_KIND, type ViewCatalogRecord, type ViewQuery, type ViewStore } from './view-store.ts';

/** A materialized view as the catalog keeps it (kind `view`, like plain views). */
export interface MaterializedViewRecord extends ViewRecord {
  materialized: true;
  target_stream: string;
  /** The target was created with the view (dropped with it) rather than named by INTO. */
  implicit_target: boolean;
  /** Paused (SQL or REST, or `pause_on_start`): stays paused across restarts until resumed. */
  paused: boolean;
  settings: MaterializedViewSettings;
}

export interface MaterializedViewsDeps {
  engine: Engine;
  catalog: Catalog;
  streams: StreamStore;
  views: ViewStore;
  /** Plans SQL as POST /queries does. */
  plan(sql: string): Promise<Plan>;
  defaultDatabase: string;
  logger?: Logger;
  retry?: RetryPolicy;
  /**
   * The data directory: each view's checkpoints live under `checkpoints/mv_<view id>/` there.
   * Without it views run without checkpoints (a restart resumes from the sources' latest rows).
   */
  dataDir?: string;
}

/** Seconds between checkpoints of a view that does not set `checkpoint_interval`. */
export const DEFAULT_MV_CHECKPOINT_INTERVAL_S = 5;

export interface CreateMaterializedViewInput {
  db: string;
  name: string;
  select: ViewQuery;
  /** INTO target (same database). */
  into?: { database?: string; name: string };
  description?: string;
  ifNotExists?: boolean;
  orReplace?: boolean;
}

/** What a running view reports (the REST resources and stats are built from it). */
export interface MaterializedViewState {
  status: MaterializedViewStatus;
  statusTs: number;
  lastError: { message: string; at: number };
  /** Per source `db.name`: last processed `_tp_sn` and the source's last committed one. */
  sources: Record<string, { processedSn: number; endSn: number }>;
  /** Largest event time the execution has processed (epoch ms, 0: unknown). */
  processedTime: number;
  written: WriteCounters;
  /** Hand-overs of rows waiting at the pause gate (a paused view that has new results). */
  held: number;
  retries: number;
}

interface Running {
  runner: MaterializedViewRunner;
  writer: ViewWriter;
  gate: PauseGate;
}

function shown(db: string, name: string, defaultDb: string): string {
  return db === defaultDb ? name : `${db}.${name}`;
}

/**
 * Materialized views (issue 11): creation with validation (sources exist, a streaming query,
 * no recursion, an INTO target whose columns match, or an implicit target made from the result
 * columns), one background runner per view (materialized-view-runner.ts) writing into its target
 * through the stream store with the view's id as producer, pause/resume, drop, and start/stop with
 * the server. Catalog changes run under the view store's lock.
 */
export class MaterializedViews {
  private readonly running = new Map<string, Running>();
  /** Targets being dropped with their view (the drop guard lets those through). */
  private readonly droppingTargets = new Set<string>();
  private closed = false;
  /** More targets a view may write INTO (external tables, added by their owner once it exists). */
  private readonly externals: ExternalTargets[] = [];

  constructor(private readonly deps: MaterializedViewsDeps) {}

  /** Let views write INTO the targets `targets` knows (external streams, external tables). */
  useExternalTargets(targets: ExternalTargets): void {
    this.externals.push(targets);
  }

  /**
   * The INTO target `db.name` when it is an external stream or table. Asked before the streams: a
   * timeplus external stream also keeps a stream of its name (what it reads), yet INTO writes out.
   */
  private externalTarget(db: string, name: string): ExternalTarget | undefined {
    for (const t of this.externals) {
      const target = t.target(db, name);
      if (target) return target;
    }
    return undefined;
  }

  private async forgetExternal(producerId: string): Promise<void> {
    for (const t of this.externals) await t.forget?.(producerId);
  }

  /** `db.name` of the views writing INTO the external table `db.name`. */
  writersOfExternal(db: string, name: string): string[] {
    return this.list(db)
      .filter((r) => r.value.target_stream === name && !this.deps.streams.get(db, name))
      .map((r) => r.key);
  }

  get(db: string, name: string): ViewCatalogRecord | undefined {
    const r = this.deps.views.get(db, name);
    return r?.value.materialized ? r : undefined;
  }

  /** The view's record, or UNKNOWN_STREAM (404) when there is no materialized view of that name. */
  require(db: string, name: string): ViewCatalogRecord {
    const r = this.get(db, name);
    if (!r) throw err('UNKNOWN_STREAM', { name: shown(db, name, this.deps.defaultDatabase) });
    return r;
  }

  list(db?: string): ViewCatalogRecord[] {
    return this.deps.views.list(db).filter((r) => r.value.materialized);
  }

  /** Keep a view's target from being dropped under it (also an implicit target by DROP STREAM). */
  guardStreams(): void {
    this.deps.streams.guard({
      beforeDrop: (db, name) => {
        const key = streamKey(db, name);
        if (this.droppingTargets.has(key)) return;
        const writers = this.list()
          .filter((r) => streamKey(r.value.db, r.value.target_stream ?? r.value.name) === key)
          .map((r) => r.key);
        if (writers.length)
          throw err('HAVE_DEPENDENT_OBJECTS', { name: key, dependents: writers.sort().join(', ') });
      },
    });
  }

  // ---- create / drop ----

  async create(input: CreateMaterializedViewInput, actor: Actor): Promise<ViewCatalogRecord | undefined> {
    return this.deps.views.locked(async () => {
      const { db, name } = input;
      const defaultDb = this.deps.defaultDatabase;
      const existing = this.deps.views.get(db, name);
      if (existing || this.deps.streams.get(db, name)) {
        if (input.ifNotExists) return existing;
        if (input.orReplace && existing)
          throw err('NOT_IMPLEMENTED', {
            detail: `CREATE OR REPLACE of ${shown(db, name, defaultDb)}: drop the view first, then create it`,
          });
        throw err('STREAM_ALREADY_EXISTS', { name: shown(db, name, defaultDb) });
      }
      await this.deps.views.checkDatabase(db);
      const query = input.select.query;
      this.deps.views.checkReads(db, name, query);
      const settings = materializedViewSettings('settings' in query ? query.settings : undefined);
      const header = await this.streamingHeader(db, query);
      let target = name;
      let implicit = true;
      if (input.into) {
        if ((input.into.database ?? db) !== db)
          throw err('BAD_ARGUMENTS', {
            detail: 'the INTO target of a materialized view must be in the view’s database',
          });
        target = input.into.name;
        implicit = false;
        const external = this.externalTarget(db, target);
        if (external?.checkInto) external.checkInto(header);
        else if (external) this.checkExternalInto(db, target, external.columns, header);
        else await this.checkInto(db, name, target, query, header);
      }
      if (implicit) await this.createImplicitTarget(db, name, header, actor);
      const value: MaterializedViewRecord = {
        db,
        name,
        query: input.select.text,
        materialized: true,
        target_stream: target,
        implicit_target: implicit,
        paused: settings.pause_on_start === true,
        settings,
        columns: header.filter((c) => c.name !== '_tp_sn').map((c) => ({ name: c.name, type: c.type })),
        id: randomUUID(),
        description: input.description ?? '',
      };
      let record: ViewCatalogRecord;
      try {
        record = await this.deps.catalog.create<ViewRecord>(VIEW_KIND, `${db}.${name}`, value, actor);
      } catch (e) {
        if (implicit) await this.dropTarget(db, target);
        throw e;
      }
      this.startView(record);
      return record;
    });
  }

  /** DROP VIEW of a materialized view: stop it, remove it, drop an implicit target (an INTO one stays). */
  async drop(db: string, name: string, options: { ifExists?: boolean } = {}): Promise<boolean> {
    return this.deps.views.locked(async () => {
      const record = this.get(db, name);
      if (!record) {
        if (options.ifExists && !this.deps.views.get(db, name)) return false;
        throw err('UNKNOWN_STREAM', { name: shown(db, name, this.deps.defaultDatabase) });
      }
      const dependents = this.deps.views.dependents(db, name);
      const v = record.value as MaterializedViewRecord;
      // A view reading the view's name reads its target: refused as for any dependency.
      if (dependents.length)
        throw err('HAVE_DEPENDENT_OBJECTS', { name: `${db}.${name}`, dependents: dependents.join(', ') });
      const writer = this.running.get(record.key)?.writer;
      await this.stopView(record.key);
      await this.deps.catalog.delete(VIEW_KIND, record.key);
      await this.checkpointStore(v)?.destroy();
      await this.forgetExternal(v.id ?? record.key);
      await writer?.discard?.();
      if (v.implicit_target) await this.dropTarget(db, v.target_stream);
      return true;
    });
  }

  // ---- pause / resume ----

  async pause(db: string, name: string, actor: Actor, options: { sync?: boolean } = {}): Promise<void> {
    const record = this.require(db, name);
    await this.setPaused(record, true, actor);
    await this.running.get(record.key)?.runner.pause(options.sync ?? false);
  }

  /** Resume; `sync` waits until the view executes again (or fails). */
  async resume(db: string, name: string, actor: Actor, options: { sync?: boolean } = {}): Promise<void> {
    const record = this.require(db, name);
    await this.setPaused(record, false, actor);
    let r = this.running.get(record.key);
    if (r) r.runner.resume();
    else {
      this.startView(this.require(db, name));
      r = this.running.get(record.key);
    }
    if (options.sync) await r?.runner.settledAfterResume();
  }

  /**
   * PATCH: the description; TTL and retention are the target's, for an implicit target only (an
   * INTO target is a stream of its own: change it there; NOT_IMPLEMENTED 48 as in Proton).
   */
  async update(
    db: string,
    name: string,
    patch: {
      description?: string;
      ttl?: string;
      logstoreRetentionBytes?: number;
      logstoreRetentionMs?: number;
    },
    actor: Actor,
  ): Promise<void> {
    const record = this.require(db, name);
    const v = record.value as MaterializedViewRecord;
    const { description, ...storage } = patch;
    if (Object.keys(storage).length > 0) {
      if (!v.implicit_target)
        throw err('NOT_IMPLEMENTED', {
          detail: `${shown(db, name, this.deps.defaultDatabase)} writes INTO ${v.target_stream}: change the TTL or retention of that stream`,
        });
      await this.deps.streams.update(
        db,
        v.target_stream,
        {
          ...(storage.ttl !== undefined ? { ttl: storage.ttl === '' ? null : storage.ttl } : {}),
          ...(storage.logstoreRetentionBytes !== undefined
            ? { logstoreRetentionBytes: storage.logstoreRetentionBytes }
            : {}),
          ...(storage.logstoreRetentionMs !== undefined
            ? { logstoreRetentionMs: storage.logstoreRetentionMs }
            : {}),
        },
        actor,
      );
    }
    if (description !== undefined && description !== v.description)
      await this.deps.views.locked(() =>
        this.deps.catalog.update<ViewRecord>(
          VIEW_KIND,
          record.key,
          { ...v, description } as ViewRecord,
          actor,
        ),
      );
  }

  // ---- state ----

  /** The running state of a view (Suspended with no error when it is not running). */
  state(record: ViewCatalogRecord): MaterializedViewState {
    const r = this.running.get(record.key);
    const v = record.value as MaterializedViewRecord;
    const processed = r?.runner.processedSn() ?? {};
    const sources: MaterializedViewState['sources'] = {};
    for (const [key, sn] of Object.entries(processed)) {
      const [sdb, ...rest] = key.split('.');
      let end = -1;
      try {
        end = this.deps.streams.committedSn(sdb as string, rest.join('.'));
      } catch {
        // a source dropped or not open: its end is unknown
      }
      sources[key] = { processedSn: sn, endSn: end };
    }
    return {
      status: r ? r.runner.status : v.paused ? 'Paused' : 'Suspended',
      statusTs: r ? r.runner.statusTs : Date.now(),
      lastError: r ? r.runner.lastError : { message: '', at: 0 },
      sources,
      processedTime: r?.runner.current?.progress().lastEventTime ?? 0,
      written: r ? { ...r.writer.counters } : { rows: 0, writes: 0, lastWriteAt: 0 },
      held: r?.gate.held ?? 0,
      retries: r?.runner.retries ?? 0,
    };
  }

  // ---- lifecycle ----

  /** Start every view of the catalog (paused ones stay paused). */
  startAll(): void {
    for (const r of this.list()) this.startView(r);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.running.keys()].map((k) => this.stopView(k)));
  }

  // ---- internals ----

  private startView(record: ViewCatalogRecord): void {
    if (this.closed || this.running.has(record.key)) return;
    const v = record.value as MaterializedViewRecord;
    const gate = new PauseGate();
    if (v.paused) gate.close();
    const external = this.externalTarget(v.db, v.target_stream);
    const writer: ViewWriter = external
      ? external.writer({ producerId: v.id ?? record.key, gate })
      : new TargetWriter({
          streams: this.deps.streams,
          db: v.db,
          target: v.target_stream,
          producerId: v.id ?? record.key,
          gate,
        });
    const durability = this.durability(v);
    const runner = new MaterializedViewRunner({
      key: record.key,
      gate,
      ...(durability ? { durability } : {}),
      sink: writer,
      retry: this.deps.retry ?? DEFAULT_RETRY,
      ...(this.deps.logger ? { logger: this.deps.logger } : {}),
      plan: async () => {
        const plan = await this.planStreaming(v.db, parseQuery(v.query));
        writer.setHeader(plan.header);
        return plan;
      },
    });
    this.running.set(record.key, { runner, writer, gate });
    runner.start();
  }

  /** The checkpoint store of view `v` (undefined without a data directory). */
  private checkpointStore(v: MaterializedViewRecord): FileCheckpointStore | undefined {
    if (!this.deps.dataDir) return undefined;
    return new FileCheckpointStore(this.deps.engine, this.deps.dataDir, `mv_${v.id ?? v.name}`);
  }

  private durability(v: MaterializedViewRecord): Durability | undefined {
    const store = this.checkpointStore(v);
    if (!store) return undefined;
    const seconds = v.settings.checkpoint_interval ?? DEFAULT_MV_CHECKPOINT_INTERVAL_S;
    return { store, checkpointIntervalMs: seconds * 1000 };
  }

  private async stopView(key: string): Promise<void> {
    const r = this.running.get(key);
    if (!r) return;
    this.running.delete(key);
    // Close first so a writer waiting on a retry backoff lets the runner stop; await it after.
    const closing = r.writer.close?.();
    await r.runner.stop();
    await closing;
  }

  private async setPaused(record: ViewCatalogRecord, paused: boolean, actor: Actor): Promise<void> {
    const v = record.value as MaterializedViewRecord;
    if (v.paused === paused) return;
    await this.deps.views.locked(() =>
      this.deps.catalog.update<ViewRecord>(VIEW_KIND, record.key, { ...v, paused } as ViewRecord, actor),
    );
  }

  /** Plan the view's query as a streaming query (INCORRECT_QUERY when it is not one). */
  private async planStreaming(db: string, query: Query): Promise<RowsPlan> {
    const sql = print(db === this.deps.defaultDatabase ? query : qualifyReferences(query, db), {
      pretty: false,
    });
    const plan = await this.deps.plan(sql);
    if (plan.kind !== 'rows' || !plan.streaming) {
      if (plan.kind === 'rows') await plan.dispose?.();
      throw err('INCORRECT_QUERY', {
        detail:
          'the query of a materialized view must be a streaming query (it reads a stream, not only table(...) or engine tables)',
      });
    }
    return plan;
  }

  /** The result columns of the view's streaming query (planned once, not run). */
  private async streamingHeader(db: string, query: Query): Promise<ResultColumn[]> {
    const plan = await this.planStreaming(db, query);
    try {
      // A view runs durably (exactly once across restarts): a shape the executor cannot checkpoint
      // is refused rather than run with gaps or doubles after a crash.
      const refusal = this.deps.dataDir && isDurablePlan(plan) ? durablePlanRefusal(plan) : undefined;
      if (refusal)
        throw err('NOT_IMPLEMENTED', {
          detail: `a materialized view must resume exactly where it was after a restart, and ${refusal}`,
        });
      const names = new Set<string>();
      for (const c of plan.header) {
        if (names.has(c.name)) throw err('DUPLICATE_COLUMN', { name: c.name });
        names.add(c.name);
      }
      return plan.header;
    } finally {
      await plan.dispose?.();
    }
  }

  /** INTO: the target exists, is not read by the query (no loop through other views), columns match. */
  private async checkInto(
    db: string,
    name: string,
    target: string,
    query: Query,
    header: readonly ResultColumn[],
  ): Promise<void> {
    const defaultDb = this.deps.defaultDatabase;
    const def = this.deps.streams.get(db, target)?.value;
    if (!def) {
      const view = this.deps.views.get(db, target);
      if (view)
        throw err('BAD_ARGUMENTS', {
          detail: `the INTO target ${shown(db, target, defaultDb)} is a view; a materialized view writes into a stream`,
        });
      throw err('UNKNOWN_STREAM', { name: shown(db, target, defaultDb) });
    }
    const targetKey = streamKey(db, target);
    const sources = new Set<string>();
    for (const ref of tableReferences(query))
      for (const s of this.streamsBehind(`${ref.database ?? db}.${ref.name}`, new Set())) sources.add(s);
    if (sources.has(targetKey) || [...this.downstreamOf(targetKey)].some((k) => sources.has(k)))
      throw err('INCORRECT_QUERY', {
        detail: `materialized view ${shown(db, name, defaultDb)} would read what it writes: ${shown(db, target, defaultDb)} feeds its own query`,
      });
    const columns = new Map(def.columns.filter((c) => !c.alias).map((c) => [c.name, c]));
    const casts: string[] = [];
    for (const c of header) {
      if (c.name === '_tp_sn') continue;
      const tc = columns.get(c.name);
      if (!tc) {
        if (c.name === '_tp_delta') continue;
        throw err('NO_SUCH_COLUMN_IN_TABLE', { name: c.name, stream: shown(db, target, defaultDb) });
      }
      let from: string;
      try {
        from = toClickHouseType(c.type);
      } catch {
        continue; // a type Proton has no name for: the engine decides at write time
      }
      casts.push(
        `CAST(materialize(defaultValueOfTypeName(${quoteString(from)})), ${quoteString(tc.engineType)})`,
      );
    }
    if (casts.length === 0) return;
    try {
      await this.deps.engine.query(`SELECT ${casts.join(', ')} FROM numbers(0)`);
    } catch (e) {
      throw err('TYPE_MISMATCH', {
        detail: `the columns of ${shown(db, target, defaultDb)} do not take the view's result types: ${
          e instanceof Error ? e.message : String(e)
        }`,
      });
    }
  }

  /** INTO an external stream: every result column (but `_tp_*`) must be one of its columns. */
  private checkExternalInto(
    db: string,
    target: string,
    columns: readonly { name: string }[],
    header: readonly ResultColumn[],
  ): void {
    const names = new Set(columns.map((c) => c.name));
    for (const c of header) {
      if (c.name.startsWith('_tp_')) continue;
      if (!names.has(c.name))
        throw err('NO_SUCH_COLUMN_IN_TABLE', {
          name: c.name,
          stream: shown(db, target, this.deps.defaultDatabase),
        });
    }
  }

  /** Streams behind a name: a stream itself, a materialized view's target, a view's sources. */
  private streamsBehind(key: string, seen: Set<string>): Set<string> {
    const out = new Set<string>();
    if (seen.has(key)) return out;
    seen.add(key);
    const [db, ...rest] = key.split('.');
    const name = rest.join('.');
    if (this.deps.streams.get(db as string, name)) {
      out.add(key);
      return out;
    }
    const v = this.deps.views.get(db as string, name)?.value;
    if (!v) return out;
    if (v.materialized) {
      out.add(streamKey(v.db, v.target_stream ?? v.name));
      return out;
    }
    try {
      for (const ref of tableReferences(parseQuery(v.query)))
        for (const s of this.streamsBehind(`${ref.database ?? v.db}.${ref.name}`, seen)) out.add(s);
    } catch {
      // an unparsable view reads nothing we can name
    }
    return out;
  }

  /** Streams that materialized views fill, directly or in a chain, from stream `key`. */
  private downstreamOf(key: string): Set<string> {
    const edges: Array<{ from: Set<string>; to: string }> = [];
    for (const r of this.list()) {
      const v = r.value;
      const from = new Set<string>();
      try {
        for (const ref of tableReferences(parseQuery(v.query)))
          for (const s of this.streamsBehind(`${ref.database ?? v.db}.${ref.name}`, new Set())) from.add(s);
      } catch {
        continue;
      }
      edges.push({ from, to: streamKey(v.db, v.target_stream ?? v.name) });
    }
    const reached = new Set<string>();
    const queue = [key];
    while (queue.length > 0) {
      const k = queue.shift() as string;
      for (const e of edges)
        if (e.from.has(k) && !reached.has(e.to)) {
          reached.add(e.to);
          queue.push(e.to);
        }
    }
    return reached;
  }

  /** The implicit target: the result columns (`_tp_time` the stream's own) named after the view. */
  private async createImplicitTarget(
    db: string,
    name: string,
    header: readonly ResultColumn[],
    actor: Actor,
  ): Promise<void> {
    const columns: ColumnSpec[] = [];
    let time: ColumnSpec | undefined;
    // A result that selects `_tp_delta` (`SELECT ..., _tp_delta FROM changelog(s, k)`) keeps it as
    // an int8 column of the (append) target, as Proton's inner stream does: a tail of the view
    // reads each row's sign, an aggregation over it reads the rows as they were written.
    for (const c of header) {
      if (c.name === '_tp_time') time = { name: '_tp_time', type: c.type, default: "now64(3, 'UTC')" };
      else if (c.name === '_tp_delta') columns.push({ name: c.name, type: 'int8' });
      else if (!c.name.startsWith('_tp_')) columns.push({ name: c.name, type: c.type });
    }
    if (time && /^datetime64/i.test(time.type)) columns.push(time);
    await this.deps.streams.create(
      {
        db,
        name,
        columns,
        windowColumnsAllowed: true,
        deltaColumnAllowed: true,
        description: `target of materialized view ${name}`,
      },
      actor,
    );
  }

  private async dropTarget(db: string, target: string): Promise<void> {
    const key = streamKey(db, target);
    this.droppingTargets.add(key);
    try {
      await this.deps.streams.drop(db, target, { ifExists: true });
    } finally {
      this.droppingTargets.delete(key);
    }
  }
}
