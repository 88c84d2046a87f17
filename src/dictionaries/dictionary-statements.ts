import { actorOf } from '../catalog/audit.ts';
import { err } from '../errors/tributary-error.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { nameRows, StaticRows, statementPlan } from '../queries/static-rows.ts';
import { showNameFilter } from '../sql/ast/build.ts';
import type {
  CreateDictionary,
  DropStatement,
  ShowCreateStatement,
  ShowStatement,
  SystemStatement,
} from '../sql/ast/statement.ts';
import type { DictionaryStore } from './dictionary-store.ts';
import { maskedDictionaryQuery } from './masked-query.ts';

/** CREATE [OR REPLACE] DICTIONARY [IF NOT EXISTS] [db.]d (...) PRIMARY KEY ... SOURCE(...) ... */
export function createDictionaryHandler(store: DictionaryStore): StatementHandler<CreateDictionary> {
  return async (s, ctx) => {
    const text = ctx.sql.slice(s.span.start, s.span.end).trim();
    return statementPlan(ctx.sql, 'create', async () => {
      await store.create(s, text, actorOf(ctx.options.user.username));
    });
  };
}

/** DROP DICTIONARY [IF EXISTS] [db.]d */
export function dropDictionaryHandler(store: DictionaryStore): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    const db = s.target.database ?? store.defaultDatabase;
    return statementPlan(ctx.sql, 'drop', async () => {
      await store.drop(db, s.target.name, { ifExists: s.ifExists });
    });
  };
}

/** SHOW DICTIONARIES [FROM db] [[NOT] LIKE|ILIKE '...']: the dictionaries' names. */
export function showDictionariesHandler(store: DictionaryStore): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    const test = showNameFilter(s);
    const names = store
      .list(s.from?.name ?? store.defaultDatabase)
      .map((r) => r.value.name)
      .filter(test);
    return nameRows(names, ctx.sql);
  };
}

/** SHOW CREATE DICTIONARY [db.]d: the statement it was created with. */
export function showCreateDictionaryHandler(store: DictionaryStore): StatementHandler<ShowCreateStatement> {
  return async (s, ctx) => {
    const record = store.require(s.target.database ?? store.defaultDatabase, s.target.name);
    const shown = maskedDictionaryQuery(record.value.query);
    return new StaticRows([{ name: 'statement', type: 'string' }], [[shown]], ctx.sql, 'show');
  };
}

/** The name after DICTIONARY in `SYSTEM RELOAD DICTIONARY x` (the parser keeps a bare name only as a word). */
function reloadTarget(s: SystemStatement, sql: string): { database?: string; name: string } | undefined {
  if (s.target) return s.target;
  const text = sql.slice(s.span.start, s.span.end);
  const m = /\bDICTIONARY\s+(`[^`]+`|"[^"]+"|[A-Za-z_][A-Za-z0-9_]*)/i.exec(text);
  if (!m) return undefined;
  const raw = m[1] as string;
  return { name: /^[`"]/.test(raw) ? raw.slice(1, -1) : raw };
}

/**
 * SYSTEM RELOAD DICTIONARY [db.]d (load its source again now) and SYSTEM RELOAD DICTIONARIES
 * (all of them). Other SYSTEM commands go to `other`.
 */
export function systemDictionaryHandler(
  store: DictionaryStore,
  other?: StatementHandler<SystemStatement>,
): StatementHandler<SystemStatement> {
  return async (s, ctx) => {
    const [verb, what] = s.words;
    if (verb !== 'RELOAD' || (what !== 'DICTIONARY' && what !== 'DICTIONARIES')) {
      if (other) return other(s, ctx);
      throw err('NOT_IMPLEMENTED', { detail: `SYSTEM ${s.words.join(' ')} is not supported` });
    }
    if (what === 'DICTIONARIES') return statementPlan(ctx.sql, 'system', () => store.reloadAll());
    const target = reloadTarget(s, ctx.sql);
    if (!target) throw err('BAD_ARGUMENTS', { detail: 'SYSTEM RELOAD DICTIONARY needs a dictionary name' });
    const db = target.database ?? store.defaultDatabase;
    store.require(db, target.name);
    return statementPlan(ctx.sql, 'system', () => store.reload(db, target.name));
  };
}
