import type { QualifiedName, Statement } from '../ast/statement.ts';
import { parseStatement } from '../parser/parse.ts';
import { isSqlSyntaxError } from '../syntax/syntax-error.ts';

/** The answer of POST /v1beta2/pipeline/parseddl. */
export interface DdlParseResult {
  /** True when the text is a DDL statement that creates, drops, alters or renames a resource. */
  parsed: boolean;
  resourceDB: string;
  resourceName: string;
  /** stream, random_stream, external_stream, mutable_stream, view, materialized_view, external_table, input, dictionary, format_schema, function, database. */
  resourceType: string;
}

/**
 * Which resource a DDL statement is about. Text that does not parse, or that is not DDL, gives
 * `{parsed: false}` with empty fields (the route answers 200 either way).
 */
export function parseDdl(text: string, defaultDatabase = 'default'): DdlParseResult {
  let statement: Statement;
  try {
    statement = parseStatement(text);
  } catch (e) {
    if (isSqlSyntaxError(e)) return { parsed: false, resourceDB: '', resourceName: '', resourceType: '' };
    throw e;
  }
  const found = resourceOf(statement);
  if (!found) return { parsed: false, resourceDB: '', resourceName: '', resourceType: '' };
  const [type, target] = found;
  return {
    parsed: true,
    resourceDB: type === 'database' ? target.name : (target.database ?? defaultDatabase),
    resourceName: target.name,
    resourceType: type,
  };
}

function resourceOf(s: Statement): [string, QualifiedName] | undefined {
  switch (s.kind) {
    case 'CreateStream':
      return [s.variant === 'STREAM' ? 'stream' : `${s.variant.toLowerCase()}_stream`, s.target];
    case 'CreateView':
      return [s.materialized ? 'materialized_view' : 'view', s.target];
    case 'CreateExternalTable':
      return ['external_table', s.target];
    case 'CreateInput':
      return ['input', { name: s.name }];
    case 'CreateDictionary':
      return ['dictionary', s.target];
    case 'CreateFormatSchema':
      return ['format_schema', { name: s.name }];
    case 'CreateFunction':
      return ['function', { name: s.name }];
    case 'CreateDatabase':
      return ['database', { name: s.name }];
    case 'Drop':
      return [s.object.toLowerCase().replace(/ /g, '_'), s.target];
    case 'Alter':
      return [s.object.toLowerCase(), s.target];
    case 'Rename': {
      const first = s.pairs[0];
      return first ? [s.object.toLowerCase(), first.from] : undefined;
    }
    default:
      return undefined;
  }
}
