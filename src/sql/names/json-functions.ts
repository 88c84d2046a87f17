import type { Expr, FunctionCall } from '../ast/expression.ts';
import type { Span } from '../ast/span.ts';

/**
 * Proton's JSON functions whose meaning differs from the engine function of the same name, as
 * engine calls:
 *
 * - `json_value(json, path)`: the first value the JSONPath selects, a string unquoted, and (unlike
 *   the engine's JSON_VALUE) an object or array as its JSON text; '' when nothing matches.
 * - `json_values(json, path1, path2, ...)`: `[json_value(json, path1), json_value(json, path2), ...]`.
 * - `json_extract_array(json[, key_or_index...])`: the array at the keys as `array(string)`, its
 *   string elements unquoted and the others as JSON text (`[1, "a", {"b":2}]` -> `['1','a','{"b":2}']`);
 *   `[]` when the value is not an array.
 *
 * Both answer what Proton's own implementations (FunctionSQLJSON.h, FunctionsJSON.cpp) answer,
 * built from engine functions: JSON_QUERY selects, JSONExtractArrayRaw splits, JSONExtractString
 * unquotes.
 */

const LAMBDA_PARAM = '__json_element';

/** What a built call takes its source position from. */
type At = { readonly span: Span };

const fn = (name: string, args: readonly Expr[], at: At): FunctionCall => ({
  kind: 'Function',
  name,
  args,
  distinct: false,
  span: at.span,
});

/** `arrayMap(e -> if(JSONType(e) = 'String', JSONExtractString(e), e), rawElements)`. */
function unquoteStrings(rawElements: Expr, at: At): FunctionCall {
  const e: Expr = { kind: 'Identifier', parts: [LAMBDA_PARAM], span: at.span };
  const isString: Expr = {
    kind: 'Binary',
    op: '=',
    left: fn('JSONType', [e], at),
    right: { kind: 'String', value: 'String', span: at.span },
    span: at.span,
  };
  const body = fn('if', [isString, fn('JSONExtractString', [e], at), e], at);
  return fn('arrayMap', [{ kind: 'Lambda', params: [LAMBDA_PARAM], body, span: at.span }, rawElements], at);
}

/** Proton's json_value(json, path) over the engine's JSON_QUERY (which wraps what it selects in `[...]`). */
function jsonValue(json: Expr, path: Expr, at: At): FunctionCall {
  const selected = fn('JSONExtractArrayRaw', [fn('JSON_QUERY', [json, path], at)], at);
  const first = fn('arraySlice', [selected, num('1', at), num('1', at)], at);
  return fn('arrayElement', [unquoteStrings(first, at), num('1', at)], at);
}

const num = (text: string, at: At): Expr => ({ kind: 'Number', text, span: at.span });

/** The engine call for a Proton JSON function, or undefined when `lower` is not one of them. */
export function mapJsonCall(lower: string, c: FunctionCall): FunctionCall | undefined {
  const [json, ...rest] = c.args;
  if (!json) return undefined;
  switch (lower) {
    case 'json_value':
      if (rest.length !== 1) return undefined;
      return jsonValue(json, rest[0] as Expr, c);
    case 'json_values':
      if (rest.length === 0) return undefined;
      return fn(
        'array',
        rest.map((path) => jsonValue(json, path, c)),
        c,
      );
    case 'json_extract_array':
      return unquoteStrings(fn('JSONExtractArrayRaw', c.args, c), c);
    default:
      return undefined;
  }
}

/**
 * Every value a many-valued JSONPath (`$.a[*]`, `$.a[*].b`) selects, as `array(string)` with
 * strings unquoted: what Proton's shortcut `col:a[*]` answers (json_extract_array's elements).
 */
export function jsonSelectAll(json: Expr, path: string, at: At): FunctionCall {
  const query = fn('JSON_QUERY', [json, { kind: 'String', value: path, span: at.span }], at);
  return unquoteStrings(fn('JSONExtractArrayRaw', [query], at), at);
}

/** Proton's `col:path` (one value) as an engine call: json_value's meaning. */
export function jsonSelectOne(json: Expr, path: string, at: At): FunctionCall {
  return jsonValue(json, { kind: 'String', value: path, span: at.span }, at);
}

/** Names `mapJsonCall` maps that the engine has no function for. */
export const MAPPED_JSON_FUNCTIONS: readonly string[] = ['json_values', 'json_extract_array'];

/** Names `mapJsonCall` maps although the engine has a function of that name (with another meaning). */
export const REDEFINED_JSON_FUNCTIONS: readonly string[] = ['json_value'];

/**
 * The JSONPath of Proton's shortcut `col:path` as written after the colon (`a.b`, `a[0].b`,
 * `[1]`, `` `a.b`.c ``, `b[*]`): `$` then each key backquoted (keys may hold dots or spaces) and
 * each `[...]` as written.
 */
export function shortcutJsonPath(written: string): string {
  let out = '$';
  let i = 0;
  while (i < written.length) {
    const ch = written[i] as string;
    if (ch === '.') {
      i++;
      continue;
    }
    if (ch === '[') {
      const end = written.indexOf(']', i);
      const stop = end < 0 ? written.length : end + 1;
      out += written.slice(i, stop);
      i = stop;
      continue;
    }
    let key: string;
    if (ch === '`' || ch === '"') {
      let j = i + 1;
      key = '';
      while (j < written.length && written[j] !== ch) {
        if (written[j] === '\\' && j + 1 < written.length) j++;
        key += written[j];
        j++;
      }
      i = j + 1;
    } else {
      let j = i;
      while (j < written.length && written[j] !== '.' && written[j] !== '[') j++;
      key = written.slice(i, j);
      i = j;
    }
    out += `.\`${key.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
  }
  return out;
}

/** Whether a JSONPath selects many values (`[*]`): the shortcut then answers all of them, as an array. */
export function selectsMany(path: string): boolean {
  return /\[\s*\*\s*\]/.test(path);
}
