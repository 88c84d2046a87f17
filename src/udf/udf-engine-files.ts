import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UDF_HEAP_LIMIT_MB } from '../engine/udf-failure.ts';
import { translateType } from '../sql/translator/translate.ts';
import { foldFunctionName, keepsSerializedState } from './uda-state.ts';
import type { UdfDefinition } from './udf-definition.ts';

/**
 * The engine calls user-defined functions itself: each is a ClickHouse `executable_pool` function
 * (a config file `<name>_function.xml` in the UDF directory, loaded through the engine's
 * `user_defined_executable_functions_config`) whose command starts `udf-process.mjs` under node
 * with the function's spec. So a UDF works anywhere in any SQL the engine runs (historical
 * queries, every streaming step), and the JavaScript runs in its own process: a body that loops,
 * throws or allocates without bound fails that query only.
 *
 * A JavaScript aggregate is an engine function of arrays (`__trb_uda_<name>`): queries call it on
 * the `group_array` of each argument (aggregate-udf-rewrite.ts), so the engine keeps the state of
 * every group (its -State columns in streaming state tables) and the function folds each group's
 * values when a result is emitted.
 */

/** The engine name of a function: the UDF's own name, `__trb_uda_<name>` for a JavaScript aggregate. */
export function engineFunctionName(def: Pick<UdfDefinition, 'name' | 'type' | 'is_aggregation'>): string {
  return def.is_aggregation ? `__trb_uda_${def.name}` : def.name;
}

/**
 * An aggregate with its own emit (`has_customized_emit`) gets, before its values, the batch that
 * folded each value and its sequence number, and after them the batch being emitted; it answers
 * an array of the results to emit (aggregate-udf-rewrite.ts).
 */
const EMIT_TAGS = [
  { name: '__trb_batches', proton: 'array(uint64)', engine: 'Array(UInt64)' },
  { name: '__trb_sns', proton: 'array(int64)', engine: 'Array(Int64)' },
];
const EMIT_BATCH = { name: '__trb_batch', proton: 'uint64', engine: 'UInt64' };

/** The deltas after a plain aggregate's values (uda-deltas.ts); process() gets them when not empty. */
const DELTAS = { name: '__trb_deltas', proton: 'array(int8)', engine: 'Array(Int8)' };
/** The serialized states after the deltas of an aggregate that keeps its state serialized (uda-state.ts). */
const STATES = { name: '__trb_states', proton: 'array(string)', engine: 'Array(String)' };

/** Processes per function the engine keeps for concurrent queries. */
const POOL_SIZE = 2;
const RUNNER = fileURLToPath(new URL('./udf-process.mjs', import.meta.url));

const xml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The spec the function process reads (argv[2]). */
function processSpec(def: UdfDefinition): Record<string, unknown> {
  const aggregate = def.is_aggregation;
  return {
    name: def.name,
    kind: def.type === 'remote' ? 'remote' : 'javascript',
    aggregate,
    arguments: [
      ...(def.customized_emit ? EMIT_TAGS.map((t) => ({ name: t.name, type: t.proton })) : []),
      ...def.arguments.map((a) => ({ name: a.name, type: aggregate ? `array(${a.type})` : a.type })),
      ...(def.customized_emit ? [{ name: EMIT_BATCH.name, type: EMIT_BATCH.proton }] : []),
      ...(aggregate && !def.customized_emit ? [{ name: DELTAS.name, type: DELTAS.proton }] : []),
      ...(keepsSerializedState(def) ? [{ name: STATES.name, type: STATES.proton }] : []),
    ],
    ...(keepsSerializedState(def) ? { serializedState: true } : {}),
    ...(def.customized_emit ? { customizedEmit: true } : {}),
    timeoutMs: def.execution_timeout,
    ...(def.source !== undefined ? { source: def.source } : {}),
    ...(def.url !== undefined ? { url: def.url } : {}),
    ...(def.auth_header ? { authHeader: def.auth_header, authKey: def.auth_key ?? '' } : {}),
  };
}

/**
 * The engine's declaration of `def` (its `<function>` element): the function itself, or (`fold`)
 * the fold of an aggregate that keeps its state serialized, which answers the serialized state.
 */
function functionXml(def: UdfDefinition, script: string, fold = false): string {
  const aggregate = def.is_aggregation;
  // The engine waits a little longer than the process's own limit, which reports the clearer error.
  const readTimeout = (def.execution_timeout ?? 10_000) + 5_000;
  const argument = (type: string, name: string) =>
    `<argument><type>${xml(type)}</type><name>${xml(name)}</name></argument>`;
  const emitting = def.customized_emit === true;
  const args = [
    ...(emitting ? EMIT_TAGS.map((t) => argument(t.engine, t.name)) : []),
    ...def.arguments.map((a) => {
      const t = translateType(a.type);
      return argument(aggregate ? `Array(${t})` : t, a.name);
    }),
    ...(emitting ? [argument(EMIT_BATCH.engine, EMIT_BATCH.name)] : []),
    ...(aggregate && !emitting ? [argument(DELTAS.engine, DELTAS.name)] : []),
    ...(keepsSerializedState(def) ? [argument(STATES.engine, STATES.name)] : []),
  ].join('');
  const returnType = fold ? 'String' : translateType(def.return_type);
  return [
    '<function>',
    '<type>executable_pool</type>',
    `<name>${xml(fold ? foldFunctionName(def.name) : engineFunctionName(def))}</name>`,
    `<return_type>${xml(emitting ? `Array(${returnType})` : returnType)}</return_type>`,
    args,
    '<format>JSONEachRow</format>',
    `<command>${xml(fold ? `${script} fold` : script)}</command>`,
    '<send_chunk_header>1</send_chunk_header>',
    `<pool_size>${POOL_SIZE}</pool_size>`,
    `<command_read_timeout>${readTimeout}</command_read_timeout>`,
    `<command_write_timeout>${readTimeout}</command_write_timeout>`,
    '<command_termination_timeout>2</command_termination_timeout>',
    '<stderr_reaction>log_last</stderr_reaction>',
    '<deterministic>false</deterministic>',
    '</function>',
  ].join('\n');
}

/** Write the engine files of `def` into `dir` (replacing an older version). */
export function writeUdfFiles(dir: string, def: UdfDefinition): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const specFile = join(dir, `${def.name}.spec.json`);
  const script = `${def.name}.sh`;
  writeFileSync(specFile, JSON.stringify(processSpec(def)), { mode: 0o600 });
  writeFileSync(
    join(dir, script),
    `#!/bin/sh\nexec ${shellQuote(process.execPath)} --max-old-space-size=${UDF_HEAP_LIMIT_MB} --max-semi-space-size=16 ${shellQuote(RUNNER)} ${shellQuote(specFile)} "$@"\n`,
    { mode: 0o700 },
  );
  const functions = [
    functionXml(def, script),
    ...(keepsSerializedState(def) ? [functionXml(def, script, true)] : []),
  ];
  writeFileSync(join(dir, `${def.name}_function.xml`), `<functions>\n${functions.join('\n')}\n</functions>`, {
    mode: 0o600,
  });
}

/** Remove the engine files of the function `name`. */
export function removeUdfFiles(dir: string, name: string): void {
  for (const f of [`${name}_function.xml`, `${name}.sh`, `${name}.spec.json`])
    rmSync(join(dir, f), { force: true });
}

/** Remove every function file of `dir` whose function is not in `keep` (left by an earlier run). */
export function removeStaleUdfFiles(dir: string, keep: ReadonlySet<string>): void {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return;
  }
  for (const f of files) {
    const m = /^(.*?)(_function\.xml|\.sh|\.spec\.json)$/.exec(f);
    if (m && !keep.has(m[1] as string)) rmSync(join(dir, f), { force: true });
  }
}
