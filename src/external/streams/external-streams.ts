import { join } from 'node:path';
import type { Actor } from '../../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../../catalog/catalog.ts';
import { DeliveredMark } from '../../connectors/sinks/delivered-mark.ts';
import { DeliveryWriter } from '../../connectors/sinks/delivery-writer.ts';
import { err } from '../../errors/tributary-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import type { ExternalTarget, ExternalTargets } from '../../views/external-target.ts';
import { ExternalStreamCounters, type ExternalStreamStatsBody } from './external-stream-counters.ts';
import type {
  ExternalColumn,
  ExternalStreamKind,
  Follower,
  PreviewEvent,
  PreviewRequest,
  SettingValue,
} from './external-stream-kind.ts';
import { externalStreamKind } from './external-stream-kinds.ts';

export const EXTERNAL_STREAM_KIND = 'external_stream';

/** An external stream as the catalog keeps it (key `db.name`). */
export interface ExternalStreamRecord {
  readonly db: string;
  readonly name: string;
  readonly type: string;
  readonly columns: readonly ExternalColumn[];
  readonly settings: Readonly<Record<string, SettingValue>>;
  readonly description: string;
}

export interface CreateExternalStreamInput {
  db: string;
  name: string;
  columns: readonly ExternalColumn[];
  settings: Record<string, SettingValue>;
  description?: string;
  ifNotExists?: boolean;
}

export interface ExternalStreamsDeps {
  catalog: Catalog;
  streams: StreamStore;
  defaultDatabase: string;
  /** Is `db.name` taken by something else (a view, a dictionary...)? */
  nameTaken?(db: string, name: string): boolean;
  /** Materialized views writing INTO `db.name` (it is not dropped under them). */
  writersOf?(db: string, name: string): string[];
  /** Views and materialized views reading `db.name` (a log or timeplus stream is not dropped under them). */
  readersOf?(db: string, name: string): string[];
  /** Delivered marks of views INTO external streams live under `<dataDir>/deliveries/`. */
  dataDir?: string;
  /** The directory log external streams read in (docs/operations.md, "User files directory"). */
  userFilesDir?: string;
  logger?: Logger;
}

const MASK = '******';

/**
 * External streams (CREATE EXTERNAL STREAM ... SETTINGS type='...'): records in the catalog, their
 * settings checked by their kind (external-stream-kind.ts), secrets masked wherever they are shown,
 * and, for writable kinds, the writer that materialized views INTO them and INSERT INTO use.
 */
export class ExternalStreams implements ExternalTargets {
  private readonly counters = new Map<string, ExternalStreamCounters>();
  /** Followers of the readable kinds Tributary fetches from (log), by `db.name`. */
  private readonly followers = new Map<string, Follower>();
  /** Rows (and their JSON bytes) the followers committed, by `db.name`. */
  private readonly readCounters = new Map<string, ExternalStreamCounters>();

  constructor(private readonly deps: ExternalStreamsDeps) {}

  /** Rows and bytes written into it per second over the last 30 minutes. */
  stats(db: string, name: string): ExternalStreamStatsBody {
    this.require(db, name);
    const written = (this.counters.get(`${db}.${name}`) ?? new ExternalStreamCounters()).snapshot();
    const read = this.readCounters.get(`${db}.${name}`)?.snapshot();
    return read ? { ...written, read_eps: read.written_eps, read_bps: read.written_bps } : written;
  }

  private countersOf(r: ExternalStreamRecord): ExternalStreamCounters {
    const key = `${r.db}.${r.name}`;
    let c = this.counters.get(key);
    if (!c) {
      c = new ExternalStreamCounters();
      this.counters.set(key, c);
    }
    return c;
  }

  get(db: string, name: string): CatalogRecord<ExternalStreamRecord> | undefined {
    return this.deps.catalog.get<ExternalStreamRecord>(EXTERNAL_STREAM_KIND, `${db}.${name}`);
  }

  require(db: string, name: string): CatalogRecord<ExternalStreamRecord> {
    const r = this.get(db, name);
    if (!r) throw err('UNKNOWN_STREAM', { name: this.shown(db, name) });
    return r;
  }

  list(db?: string): CatalogRecord<ExternalStreamRecord>[] {
    return this.deps.catalog
      .list<ExternalStreamRecord>(
        EXTERNAL_STREAM_KIND,
        db === undefined ? undefined : (r) => r.value.db === db,
      )
      .sort((a, b) => a.key.localeCompare(b.key));
  }

  async create(input: CreateExternalStreamInput, actor: Actor): Promise<void> {
    const { db, name } = input;
    if (this.get(db, name) || this.deps.streams.get(db, name) || this.deps.nameTaken?.(db, name)) {
      if (input.ifNotExists) return;
      throw err('STREAM_ALREADY_EXISTS', { name: this.shown(db, name) });
    }
    const kind = externalStreamKind(input.settings.type);
    const columns = input.columns.length === 0 && kind.defaultColumns ? kind.defaultColumns : input.columns;
    if (columns.length === 0 && kind.type === 'http')
      throw err('EXTERNAL_STREAM_BAD_SETTING', {
        setting: 'columns',
        detail: 'an http external stream needs its columns',
      });
    const settings = { ...input.settings, type: kind.type };
    kind.check({ columns, settings });
    const record: ExternalStreamRecord = {
      db,
      name,
      type: kind.type,
      columns,
      settings,
      description: input.description ?? '',
    };
    // A kind Tributary fetches from keeps its rows in a stream of the same name (checked first:
    // a directory outside the user files directory creates nothing).
    const follower = kind.follow ? this.follower(kind, record) : undefined;
    if (follower)
      await this.deps.streams.create(
        {
          db,
          name,
          columns: columns.map((c) => ({ name: c.name, type: c.type })),
          description: `rows of ${kind.type} external stream ${name}`,
        },
        actor,
      );
    try {
      await this.deps.catalog.create<ExternalStreamRecord>(
        EXTERNAL_STREAM_KIND,
        `${db}.${name}`,
        record,
        actor,
      );
    } catch (e) {
      if (follower) await this.deps.streams.drop(db, name, { ifExists: true });
      throw e;
    }
    if (follower) {
      this.followers.set(`${db}.${name}`, follower);
      await follower.start();
    }
  }

  /** Start following every external stream of a kind Tributary fetches from (server start). */
  async start(): Promise<void> {
    for (const r of this.list()) {
      const kind = externalStreamKind(r.value.type);
      if (!kind.follow || this.followers.has(r.key)) continue;
      try {
        const follower = this.follower(kind, r.value);
        this.followers.set(r.key, follower);
        await follower.start();
      } catch (e) {
        this.deps.logger?.warn(
          { stream: r.key, err: e instanceof Error ? e.message : String(e) },
          'external stream not followed',
        );
      }
    }
  }

  /** Stop every follower (server close); positions are kept. */
  async close(): Promise<void> {
    const all = [...this.followers.values()];
    this.followers.clear();
    await Promise.all(all.map((f) => f.stop()));
  }

  /** Operation 21: `count` events of an external stream described by `settings`, not created. */
  async preview(
    columns: readonly ExternalColumn[],
    input: Record<string, SettingValue>,
    request: PreviewRequest,
  ): Promise<PreviewEvent[]> {
    const kind = externalStreamKind(input.type);
    const settings = { ...input, type: kind.type };
    const shape = {
      columns: columns.length === 0 && kind.defaultColumns ? kind.defaultColumns : columns,
      settings,
    };
    if (!kind.readable || !kind.preview)
      throw err('EXTERNAL_STREAM_WRITE_ONLY', {
        name: '(preview)',
        type: kind.type,
        detail: 'preview reads events, and this kind cannot be read',
      });
    kind.check(shape);
    return kind.preview(shape, request, { name: '(preview)', userFilesDir: this.userFilesDir });
  }

  private get userFilesDir(): string {
    return this.deps.userFilesDir ?? join(this.deps.dataDir ?? '.', 'user_files');
  }

  private follower(kind: ExternalStreamKind, r: ExternalStreamRecord): Follower {
    const follow = kind.follow as NonNullable<ExternalStreamKind['follow']>;
    return follow({
      db: r.db,
      name: r.name,
      shape: { columns: r.columns, settings: r.settings },
      userFilesDir: this.userFilesDir,
      ...(this.deps.dataDir
        ? {
            stateFile: join(
              this.deps.dataDir,
              'external-streams',
              `${`${r.db}.${r.name}`.replace(/[^A-Za-z0-9_.-]/g, '_')}.offsets.json`,
            ),
          }
        : {}),
      ...(this.deps.logger ? { logger: this.deps.logger } : {}),
      commit: async (rows, idempotencyId) => {
        const result = await this.deps.streams.ingest(r.db, r.name, { objects: rows }, { idempotencyId });
        if (result.duplicate) return;
        const key = `${r.db}.${r.name}`;
        let counters = this.readCounters.get(key);
        if (!counters) {
          counters = new ExternalStreamCounters();
          this.readCounters.set(key, counters);
        }
        counters.recordSuccess(rows.length, Buffer.byteLength(JSON.stringify(rows)));
      },
    });
  }

  async drop(db: string, name: string, options: { ifExists?: boolean } = {}): Promise<boolean> {
    if (!this.get(db, name)) {
      if (options.ifExists) return false;
      throw err('UNKNOWN_STREAM', { name: this.shown(db, name) });
    }
    const writers = [
      ...new Set([...(this.deps.writersOf?.(db, name) ?? []), ...(this.deps.readersOf?.(db, name) ?? [])]),
    ];
    if (writers.length)
      throw err('HAVE_DEPENDENT_OBJECTS', { name: `${db}.${name}`, dependents: writers.sort().join(', ') });
    this.counters.delete(`${db}.${name}`);
    const follower = this.followers.get(`${db}.${name}`);
    if (follower || externalStreamKind(this.get(db, name)?.value.type).follow) {
      this.followers.delete(`${db}.${name}`);
      this.readCounters.delete(`${db}.${name}`);
      await follower?.destroy();
      await this.deps.streams.drop(db, name, { ifExists: true });
    }
    return this.deps.catalog.delete(EXTERNAL_STREAM_KIND, `${db}.${name}`);
  }

  /** DROP DATABASE: its external streams go with it (the views writing into them went first). */
  async forgetDatabase(db: string): Promise<void> {
    for (const r of this.list(db)) {
      this.counters.delete(r.key);
      await this.followers.get(r.key)?.destroy();
      this.followers.delete(r.key);
      await this.deps.catalog.delete(EXTERNAL_STREAM_KIND, r.key);
    }
  }

  /** Settings as shown outside (GET, SHOW CREATE): secrets masked. */
  maskedSettings(r: ExternalStreamRecord): Record<string, SettingValue> {
    const kind = externalStreamKind(r.type);
    return Object.fromEntries(Object.entries(r.settings).map(([k, v]) => [k, kind.isSecret(k) ? MASK : v]));
  }

  /** The CREATE statement of `r`, secrets masked. */
  createQuery(r: ExternalStreamRecord): string {
    const cols = r.columns.map((c) => `${quoteName(c.name)} ${c.type}`).join(', ');
    const settings = Object.entries(this.maskedSettings(r))
      .map(
        ([k, v]) =>
          `${k} = ${typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : String(v)}`,
      )
      .join(', ');
    const name =
      r.db === this.deps.defaultDatabase ? quoteName(r.name) : `${quoteName(r.db)}.${quoteName(r.name)}`;
    return `CREATE EXTERNAL STREAM ${name} (${cols}) SETTINGS ${settings}${r.description ? ` COMMENT '${r.description.replace(/'/g, "\\'")}'` : ''}`;
  }

  /** The ExternalStream resource of the contract. */
  resource(r: CatalogRecord<ExternalStreamRecord>): Record<string, unknown> {
    const v = r.value;
    return {
      name: v.name,
      db: v.db,
      type: v.type,
      description: v.description,
      columns: v.columns.map((c) => ({
        name: c.name,
        type: c.type,
        nullable: /^nullable\(/i.test(c.type),
        default: '',
      })),
      settings: Object.entries(this.maskedSettings(v)).map(([key, value]) => ({ key, value: String(value) })),
      create_query: this.createQuery(v),
      created_at: r.audit.created_at,
      created_by: r.audit.created_by,
      last_updated_at: r.audit.last_updated_at,
      last_updated_by: r.audit.last_updated_by,
    };
  }

  /** A writer of rows into external stream `r` (INSERT INTO, materialized views INTO it). */
  writer(
    r: ExternalStreamRecord,
    o: {
      owner: string;
      mark?: DeliveredMark;
      maxAttempts?: number;
      gate?: import('../../views/pause-gate.ts').PauseGate;
    },
  ): DeliveryWriter {
    const kind = externalStreamKind(r.type);
    if (!kind.delivery)
      throw err('NOT_IMPLEMENTED', { detail: `external streams of type ${r.type} cannot be written to` });
    const { delivery, backoff } = kind.delivery(r.name, { columns: r.columns, settings: r.settings });
    return new DeliveryWriter({
      owner: o.owner,
      delivery,
      backoff,
      columns: r.columns.map((c) => c.name),
      stats: this.countersOf(r),
      ...(o.mark ? { mark: o.mark } : {}),
      ...(o.gate ? { gate: o.gate } : {}),
      ...(o.maxAttempts !== undefined ? { maxAttempts: o.maxAttempts } : {}),
      ...(this.deps.logger ? { logger: this.deps.logger } : {}),
    });
  }

  // ---- ExternalTargets (materialized views INTO an external stream) ----

  target(db: string, name: string): ExternalTarget | undefined {
    const r = this.get(db, name)?.value;
    if (!r) return undefined;
    const kind = externalStreamKind(r.type);
    if (!kind.delivery) return undefined;
    return {
      columns: r.columns,
      writer: ({ producerId, gate }) => {
        const mark = this.mark(producerId);
        return this.writer(r, { owner: producerId, gate, ...(mark ? { mark } : {}) });
      },
    };
  }

  async forget(producerId: string): Promise<void> {
    await this.mark(producerId)?.destroy();
  }

  private mark(producerId: string): DeliveredMark | undefined {
    if (!this.deps.dataDir) return undefined;
    return new DeliveredMark(
      join(this.deps.dataDir, 'deliveries', `mv_${producerId.replace(/[^A-Za-z0-9_-]/g, '_')}.json`),
    );
  }

  private shown(db: string, name: string): string {
    return db === this.deps.defaultDatabase ? name : `${db}.${name}`;
  }
}

function quoteName(n: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(n) ? n : `\`${n.replace(/`/g, '``')}\``;
}
