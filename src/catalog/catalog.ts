import type { Actor, Audit } from './audit.ts';

/**
 * Kinds of resources the catalog holds. Each kind's records are keyed by a string unique within
 * the kind (`db.name` for database-scoped resources, an id or a name otherwise).
 */
export type CatalogKind =
  | 'user'
  | 'api_key'
  | 'workspace'
  | 'database'
  | 'stream'
  | 'view'
  | 'materialized_view'
  | 'external_stream'
  | 'external_table'
  | 'input'
  | 'source'
  | 'sink'
  | 'dashboard'
  | 'saved_query'
  | 'pipeline'
  | 'schema'
  | 'udf'
  | 'dictionary'
  | 'query'
  | (string & {});

export interface CatalogRecord<T> {
  readonly kind: CatalogKind;
  readonly key: string;
  readonly value: T;
  readonly audit: Audit;
}

/**
 * Durable metadata of every resource, behind one interface. Reads are synchronous (served from
 * memory); writes return once the record is durable in the engine.
 */
export interface Catalog {
  get<T>(kind: CatalogKind, key: string): CatalogRecord<T> | undefined;
  list<T>(kind: CatalogKind, filter?: (record: CatalogRecord<T>) => boolean): CatalogRecord<T>[];
  /** Create a record; throws RESOURCE_ALREADY_EXISTS when the key is taken. */
  create<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>>;
  /** Replace a record's value, keeping its creation audit; throws RESOURCE_NOT_FOUND when absent. */
  update<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>>;
  /** Create or replace. */
  put<T>(kind: CatalogKind, key: string, value: T, actor: Actor): Promise<CatalogRecord<T>>;
  /** Delete a record; answers whether it existed. */
  delete(kind: CatalogKind, key: string): Promise<boolean>;
}

/** `db.name`, the key of a database-scoped resource. */
export function scopedKey(db: string, name: string): string {
  return `${db}.${name}`;
}
