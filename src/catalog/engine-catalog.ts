import type { Engine } from '../engine/engine.ts';
import { quoteString } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import { type Actor, newAudit, touchAudit } from './audit.ts';
import type { Catalog, CatalogKind, CatalogRecord } from './catalog.ts';

/** Tributary's own database in the engine, and the key-value table the catalog lives in. */
export const SYSTEM_DB = '_tributary';
const TABLE = `${SYSTEM_DB}.catalog`;

interface Row {
  id: string;
  kind: string;
  body: string;
}

const recordId = (kind: string, key: string) => `${kind}/${key}`;

/**
 * The catalog kept in an EmbeddedRocksDB table of the engine (a true key-value table: an insert
 * with an existing key replaces it), mirrored in memory for reads. Writes are serialised so the
 * mirror and the table never disagree.
 */
export class EngineCatalog implements Catalog {
  private readonly records = new Map<string, CatalogRecord<unknown>>();
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(private readonly engine: Engine) {}

  static async open(engine: Engine): Promise<EngineCatalog> {
    const catalog = new EngineCatalog(engine);
    await engine.query(`CREATE DATABASE IF NOT EXISTS ${SYSTEM_DB}`);
    await engine.query(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (id String, kind String, body String) ENGINE = EmbeddedRocksDB PRIMARY KEY id`,
    );
    const result = await engine.query(`SELECT id, kind, body FROM ${TABLE}`, { format: 'JSONEachRow' });
    for (const line of result.text().split('\n')) {
      if (!line) continue;
      const row = JSON.parse(line) as Row;
      catalog.records.set(row.id, JSON.parse(row.body) as CatalogRecord<unknown>);
    }
    return catalog;
  }

  get<T>(kind: CatalogKind, key: string): CatalogRecord<T> | undefined {
    return this.records.get(recordId(kind, key)) as CatalogRecord<T> | undefined;
  }

  list<T>(kind: CatalogKind, filter?: (record: CatalogRecord<T>) => boolean): CatalogRecord<T>[] {
    const out: CatalogRecord<T>[] = [];
    for (const r of this.records.values()) {
      if (r.kind !== kind) continue;
      const rec = r as CatalogRecord<T>;
      if (!filter || filter(rec)) out.push(rec);
    }
    // Creation order: records created in the same millisecond keep the order they were created in
    // (the map's insertion order; a stable sort), not the order of their keys.
    return out.sort((a, b) => a.audit.created_at.localeCompare(b.audit.created_at));
  }

  create<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>> {
    return this.serial(async () => {
      if (this.records.has(recordId(kind, key))) throw err('RESOURCE_ALREADY_EXISTS', { kind, name: key });
      return this.write({ kind, key, value, audit: newAudit(actor) });
    });
  }

  update<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>> {
    return this.serial(async () => {
      const existing = this.records.get(recordId(kind, key));
      if (!existing) throw err('RESOURCE_NOT_FOUND', { kind, name: key });
      return this.write({ kind, key, value, audit: touchAudit(existing.audit, actor) });
    });
  }

  put<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>> {
    return this.serial(async () => {
      const existing = this.records.get(recordId(kind, key));
      const audit = existing ? touchAudit(existing.audit, actor) : newAudit(actor);
      return this.write({ kind, key, value, audit });
    });
  }

  delete(kind: CatalogKind, key: string): Promise<boolean> {
    return this.serial(async () => {
      const id = recordId(kind, key);
      if (!this.records.has(id)) return false;
      await this.engine.query(`DELETE FROM ${TABLE} WHERE id = ${quoteString(id)}`);
      this.records.delete(id);
      return true;
    });
  }

  private async write<T>(record: CatalogRecord<T>): Promise<CatalogRecord<T>> {
    const id = recordId(record.kind, record.key);
    const row: Row = { id, kind: record.kind, body: JSON.stringify(record) };
    await this.engine.insert(TABLE, JSON.stringify(row), { format: 'JSONEachRow' });
    this.records.set(id, record);
    return record;
  }

  private serial<R>(fn: () => Promise<R>): Promise<R> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
