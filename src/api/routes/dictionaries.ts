import type { FastifyInstance } from 'fastify';
import type { DictionaryCatalogRecord, DictionaryStore } from '../../dictionaries/dictionary-store.ts';
import { maskedDictionaryQuery } from '../../dictionaries/masked-query.ts';
import { err } from '../../errors/tributary-error.ts';
import { ADMIN, READ } from '../access.ts';
import type { Services } from '../services.ts';

const byDb = {
  querystring: { type: 'object', properties: { db: { type: 'string', minLength: 1 } } },
} as const;

/** The contract's Dictionary: name, description, the defining query, audit fields. */
export function dictionaryResource(record: DictionaryCatalogRecord): Record<string, unknown> {
  const d = record.value;
  return { name: d.name, description: d.description, query: maskedDictionaryQuery(d.query), ...record.audit };
}

function storeOf(s: Services): DictionaryStore {
  if (!s.dictionaries)
    throw err('NOT_IMPLEMENTED', { detail: 'dictionaries are not enabled on this server' });
  return s.dictionaries;
}

/** Dictionaries (operations 8-9, and the contract's delete): created and changed with SQL. */
export function dictionaryRoutes(app: FastifyInstance, s: Services): void {
  const dbOf = (q: unknown, store: DictionaryStore) => (q as { db?: string }).db ?? store.defaultDatabase;

  app.get('/v1beta2/dictionaries', { schema: byDb, config: READ }, async (request) => {
    const store = storeOf(s);
    const { db } = request.query as { db?: string };
    return store.list(db).map(dictionaryResource);
  });

  app.get('/v1beta2/dictionaries/:name', { schema: byDb, config: READ }, async (request) => {
    const store = storeOf(s);
    const { name } = request.params as { name: string };
    return dictionaryResource(store.require(dbOf(request.query, store), name));
  });

  app.delete('/v1beta2/dictionaries/:name', { schema: byDb, config: ADMIN }, async (request, reply) => {
    const store = storeOf(s);
    const { name } = request.params as { name: string };
    await store.drop(dbOf(request.query, store), name);
    return reply.status(204).send();
  });
}
