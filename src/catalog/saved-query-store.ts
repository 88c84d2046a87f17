import { randomUUID } from 'node:crypto';
import { err } from '../errors/tributary-error.ts';
import type { Actor, Audit } from './audit.ts';
import type { Catalog, CatalogRecord } from './catalog.ts';
import { SerialQueue } from './serial-queue.ts';

interface StoredSavedQuery {
  id: string;
  name: string;
  description: string;
  sql: string;
  tags: string[];
}

/** The contract's `SavedQuery`. */
export type SavedQuery = StoredSavedQuery & Audit;

export interface SavedQueryInput {
  name: string;
  sql: string;
  description?: string;
  tags?: string[];
}

export const SAVED_QUERY_KIND = 'saved_query';

/** Tags in the order given, each once. */
const uniqueTags = (tags: string[]) => [...new Set(tags)];

/**
 * Saved queries, kept in the catalog under their id (a UUID). Names need not be unique (they are
 * labels; the id addresses a saved query). The SQL is stored as given and not run or checked: a
 * saved query may name a stream that does not exist yet.
 */
export class SavedQueryStore {
  private readonly writes = new SerialQueue();

  constructor(private readonly catalog: Catalog) {}

  list(): SavedQuery[] {
    return this.catalog.list<StoredSavedQuery>(SAVED_QUERY_KIND).map(view);
  }

  get(id: string): SavedQuery {
    return view(this.record(id));
  }

  create(input: SavedQueryInput, actor: Actor): Promise<SavedQuery> {
    const id = randomUUID();
    const stored: StoredSavedQuery = {
      id,
      name: input.name,
      sql: input.sql,
      description: input.description ?? '',
      tags: uniqueTags(input.tags ?? []),
    };
    return this.writes.run(async () => view(await this.catalog.create(SAVED_QUERY_KIND, id, stored, actor)));
  }

  /** Replace name and SQL; a description or tags left out keep their value. */
  update(id: string, input: SavedQueryInput, actor: Actor): Promise<SavedQuery> {
    return this.writes.run(async () => {
      const current = this.record(id).value;
      const next: StoredSavedQuery = {
        id,
        name: input.name,
        sql: input.sql,
        description: input.description ?? current.description,
        tags: input.tags ? uniqueTags(input.tags) : current.tags,
      };
      return view(await this.catalog.update(SAVED_QUERY_KIND, id, next, actor));
    });
  }

  delete(id: string): Promise<void> {
    return this.writes.run(async () => {
      if (!(await this.catalog.delete(SAVED_QUERY_KIND, id))) throw notFound(id);
    });
  }

  private record(id: string): CatalogRecord<StoredSavedQuery> {
    const r = this.catalog.get<StoredSavedQuery>(SAVED_QUERY_KIND, id);
    if (!r) throw notFound(id);
    return r;
  }
}

const notFound = (id: string) => err('RESOURCE_NOT_FOUND', { kind: 'Saved query', name: id });

function view(r: CatalogRecord<StoredSavedQuery>): SavedQuery {
  return { ...r.value, ...r.audit };
}
