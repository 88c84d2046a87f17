import { err } from '../../errors/tributary-error.ts';
import { quoteIdentifier } from '../../sql/printer/sql-text.ts';
import type { StreamColumn, StreamDefinition } from '../../stream/stream-definition.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import { BULK_COLUMNS } from './stream-bulk-sink.ts';

/** A stream an input writes to. */
export interface TargetStream {
  db: string;
  name: string;
}

/**
 * The stream a `target_stream` setting names: `name` in the default database, or `db.name` (a
 * name with a dot that is not itself a stream of the default database).
 */
export function resolveTargetStream(target: string, streams: StreamStore, defaultDb: string): TargetStream {
  if (streams.get(defaultDb, target)) return { db: defaultDb, name: target };
  const dot = target.indexOf('.');
  if (dot > 0 && dot < target.length - 1) return { db: target.slice(0, dot), name: target.slice(dot + 1) };
  return { db: defaultDb, name: target };
}

/**
 * Check that an elastic input can write into `target`: the stream exists and has the columns
 * `_raw string, _index string, _id string`. Other columns are allowed only when a row that omits
 * them still gets a meaningful value: a DEFAULT (e.g. one computed from `_raw`), an ALIAS, or a
 * column Tributary adds (`_tp_time`, `_tp_delta`). Anything else is INPUT_BAD_TARGET with the
 * CREATE STREAM that would do.
 */
export function checkTargetStream(
  input: string,
  target: TargetStream,
  streams: StreamStore,
): StreamDefinition {
  const shown = displayName(target);
  const def = streams.get(target.db, target.name)?.value;
  if (!def) {
    throw err('INPUT_BAD_TARGET', {
      detail: `Input ${input}: target stream ${shown} does not exist. ${expected(target)}`,
    });
  }
  const problems: string[] = [];
  for (const name of BULK_COLUMNS) {
    const c = def.columns.find((x) => x.name === name);
    if (!c) problems.push(`column ${name} is missing`);
    else if (c.alias) problems.push(`column ${name} is an ALIAS column`);
    else if (c.type.toLowerCase() !== 'string') problems.push(`column ${name} is ${c.type}, not string`);
  }
  for (const c of def.columns) {
    if ((BULK_COLUMNS as readonly string[]).includes(c.name) || acceptsOmission(c)) continue;
    problems.push(`column ${c.name} has no DEFAULT (the input writes only _raw, _index and _id)`);
  }
  if (problems.length > 0) {
    const columns = def.columns
      .filter((c) => !c.implicit)
      .map((c) => `${c.name} ${c.type}`)
      .join(', ');
    throw err('INPUT_BAD_TARGET', {
      detail: `Input ${input}: target stream ${shown} (${columns}) does not fit: ${problems.join('; ')}. ${expected(target)}`,
    });
  }
  return def;
}

function acceptsOmission(c: StreamColumn): boolean {
  return c.implicit === true || c.default !== undefined || c.alias !== undefined;
}

function displayName(t: TargetStream): string {
  return t.db === 'default' ? t.name : `${t.db}.${t.name}`;
}

/** The schema an elastic input needs, as a statement to paste. */
export function expectedTargetStatement(t: TargetStream): string {
  const name =
    t.db === 'default' ? quoteIdentifier(t.name) : `${quoteIdentifier(t.db)}.${quoteIdentifier(t.name)}`;
  return `CREATE STREAM ${name} (_raw string, _index string, _id string)`;
}

function expected(t: TargetStream): string {
  return (
    'An elastic input writes into a stream with exactly the columns _raw string, _index string, ' +
    `_id string (other columns only with a DEFAULT), such as: ${expectedTargetStatement(t)}`
  );
}
