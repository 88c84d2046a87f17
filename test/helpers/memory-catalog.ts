import { type Actor, newAudit, touchAudit } from '../../src/catalog/audit.ts';
import type { Catalog, CatalogKind, CatalogRecord } from '../../src/catalog/catalog.ts';
import { err } from '../../src/errors/tributary-error.ts';

/** A catalog in memory, for unit tests of the stores above it (integration tests use the engine's). */
export class MemoryCatalog implements Catalog {
  readonly records = new Map<string, CatalogRecord<unknown>>();

  get<T>(kind: CatalogKind, key: string): CatalogRecord<T> | undefined {
    return this.records.get(`${kind}/${key}`) as CatalogRecord<T> | undefined;
  }

  list<T>(kind: CatalogKind, filter?: (record: CatalogRecord<T>) => boolean): CatalogRecord<T>[] {
    return [...this.records.values()]
      .filter((r) => r.kind === kind)
      .map((r) => r as CatalogRecord<T>)
      .filter((r) => !filter || filter(r));
  }

  async create<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>> {
    if (this.get(kind, key)) throw err('RESOURCE_ALREADY_EXISTS', { kind, name: key });
    return this.set({ kind, key, value, audit: newAudit(actor) });
  }

  async update<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>> {
    const existing = this.get(kind, key);
    if (!existing) throw err('RESOURCE_NOT_FOUND', { kind, name: key });
    return this.set({ kind, key, value, audit: touchAudit(existing.audit, actor) });
  }

  async put<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>> {
    const existing = this.get(kind, key);
    return this.set({
      kind,
      key,
      value,
      audit: existing ? touchAudit(existing.audit, actor) : newAudit(actor),
    });
  }

  async delete(kind: CatalogKind, key: string): Promise<boolean> {
    return this.records.delete(`${kind}/${key}`);
  }

  private set<T>(record: CatalogRecord<T>): CatalogRecord<T> {
    this.records.set(`${record.kind}/${record.key}`, record);
    return record;
  }
}
