import vm from 'node:vm';
import { err } from '../errors/tributary-error.ts';
import { call } from '../sql/ast/build.ts';
import { mapFunctionCall } from '../sql/names/function-calls.ts';
import { translateType } from '../sql/translator/translate.ts';
import { sqlFunctionLambda } from './sql-function.ts';

/** One argument of a user-defined function: its name (the remote request's key) and Proton type. */
export interface UdfArgument {
  name: string;
  type: string;
}

/**
 * A user-defined function as the catalog keeps it (the fields of the contract's create request).
 * `auth_key` is the secret of a remote function; GET answers show it masked.
 */
export interface UdfDefinition {
  name: string;
  type: 'javascript' | 'remote' | 'sql';
  arguments: UdfArgument[];
  return_type: string;
  is_aggregation: boolean;
  description: string;
  /**
   * JavaScript: the body (a function named like the UDF, or the aggregate's object literal);
   * SQL: the lambda, in Proton SQL (`(x, y) -> x + y`; sql-function.ts).
   */
  source?: string;
  /** Remote: where batches are POSTed, how, and how long to wait for the answer. */
  url?: string;
  auth_method?: 'none' | 'auth_header';
  auth_header?: string;
  auth_key?: string;
  /** Milliseconds: the remote call's timeout, or the JavaScript time limit per batch. */
  execution_timeout?: number;
  /** An aggregate whose object declares `has_customized_emit: true` (not supported in queries yet). */
  customized_emit?: boolean;
}

/** What a client sends: the REST body, or what CREATE FUNCTION says. */
export interface UdfInput {
  name: string;
  type: string;
  arguments?: UdfArgument[];
  return_type: string;
  is_aggregation?: boolean;
  description?: string;
  source?: string;
  url?: string;
  auth_method?: string;
  auth_context?: { key_name?: string; key_value?: string; auth_header?: string; auth_value?: string };
  execution_timeout?: number;
}

/** Proton's default time limit of a remote call (and ours of one JavaScript batch). */
export const DEFAULT_EXECUTION_TIMEOUT_MS = 10_000;
const MAX_EXECUTION_TIMEOUT_MS = 600_000;

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function bad(detail: string): never {
  throw err('UDF_BAD_DEFINITION', { detail });
}

/** The Proton type, checked (UNKNOWN_TYPE with a suggestion when it is not a type). */
function checkType(type: string, what: string): string {
  if (typeof type !== 'string' || !type.trim()) bad(`${what} needs a type`);
  translateType(type);
  return type.trim();
}

/** Does `name` already mean something in SQL (a built-in, a Proton-only or streaming function)? */
export function isBuiltinFunction(name: string): boolean {
  return mapFunctionCall(call(name)).kind !== 'unknown';
}

/** Compile (never run) the JavaScript body: a syntax error is reported at CREATE. */
function checkJavaScript(name: string, source: string, aggregate: boolean): void {
  const code = aggregate ? `(function () { return (${source}\n); })` : `${source}\n;${name};`;
  try {
    new vm.Script(code, { filename: `${name}.js` });
  } catch (e) {
    bad(`the JavaScript body of ${name} does not parse: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!aggregate && !new RegExp(`\\b${name}\\b`).test(source))
    bad(`the JavaScript body of ${name} must define a function named ${name}`);
}

/** A SQL function: its lambda checked; its parameters are its arguments (their types are the call's). */
function sqlDefinition(name: string, input: UdfInput): UdfDefinition {
  const source = input.source;
  if (typeof source !== 'string' || !source.trim()) bad('source (the lambda of a SQL function) is required');
  if (input.is_aggregation === true) bad('a SQL function cannot be an aggregation');
  const lambda = sqlFunctionLambda(name, source);
  return {
    name,
    type: 'sql',
    arguments: lambda.params.map((p) => ({ name: p, type: '' })),
    return_type: '',
    is_aggregation: false,
    description: input.description ?? '',
    source: source.trim(),
  };
}

/** Validate a create request into the stored definition (every error a 4xx naming the field). */
export function udfDefinition(input: UdfInput): UdfDefinition {
  const name = input.name;
  if (typeof name !== 'string' || !NAME.test(name))
    bad(
      `name must be letters, digits and underscores, not starting with a digit (got ${JSON.stringify(name)})`,
    );
  if (name.startsWith('__')) bad(`name ${name}: names starting with __ are reserved`);
  if (isBuiltinFunction(name)) throw err('UDF_NAME_TAKEN', { name });
  const type = String(input.type ?? '').toLowerCase();
  if (type === 'sql') return sqlDefinition(name, input);
  if (type !== 'javascript' && type !== 'remote')
    bad(`type must be 'javascript', 'remote' or 'sql' (got ${input.type})`);
  const args = input.arguments ?? [];
  if (!Array.isArray(args)) bad('arguments must be an array of {name, type}');
  const seen = new Set<string>();
  const argumentsChecked = args.map((a, i) => {
    if (!a || typeof a.name !== 'string' || !NAME.test(a.name))
      bad(`arguments[${i}].name must be letters, digits and underscores`);
    if (seen.has(a.name)) bad(`arguments[${i}].name ${a.name} is given twice`);
    seen.add(a.name);
    return { name: a.name, type: checkType(a.type, `arguments[${i}]`) };
  });
  const returnType = checkType(input.return_type, 'return_type');
  const aggregate = input.is_aggregation === true;
  const timeout = input.execution_timeout ?? DEFAULT_EXECUTION_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_EXECUTION_TIMEOUT_MS)
    bad(`execution_timeout must be milliseconds between 1 and ${MAX_EXECUTION_TIMEOUT_MS}`);
  const base = {
    name,
    arguments: argumentsChecked,
    return_type: returnType,
    description: input.description ?? '',
    execution_timeout: timeout,
  };
  if (type === 'javascript') {
    const source = input.source;
    if (typeof source !== 'string' || !source.trim()) bad('source (the JavaScript body) is required');
    checkJavaScript(name, source, aggregate);
    return {
      ...base,
      type,
      is_aggregation: aggregate,
      source,
      ...(aggregate && /has_customized_emit\s*:\s*true/.test(source) ? { customized_emit: true } : {}),
    };
  }
  if (aggregate) bad('a remote function cannot be an aggregation (is_aggregation is for javascript)');
  let url: URL;
  try {
    url = new URL(String(input.url ?? ''));
  } catch {
    bad(`url must be an http(s) URL (got ${JSON.stringify(input.url ?? null)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    bad(`url must be http or https (got ${url.protocol})`);
  const method = String(input.auth_method ?? 'none').toLowerCase();
  if (method !== 'none' && method !== 'auth_header')
    bad(`auth_method must be 'none' or 'auth_header' (got ${input.auth_method})`);
  const ctx = input.auth_context ?? {};
  const header = ctx.key_name ?? ctx.auth_header;
  const key = ctx.key_value ?? ctx.auth_value;
  if (method === 'auth_header' && (!header || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(header)))
    bad('auth_method auth_header needs auth_context.key_name, an HTTP header name');
  return {
    ...base,
    type,
    is_aggregation: false,
    url: url.toString(),
    auth_method: method,
    ...(method === 'auth_header' ? { auth_header: header as string, auth_key: key ?? '' } : {}),
  };
}
