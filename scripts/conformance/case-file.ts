// Loads suite files of the Proton smoke-test format (JSON or YAML) into plain values. JSON is read
// losslessly (integers beyond 2^53 become bigint, as Python's json module keeps them exact; a
// duplicated key keeps its last value; raw control characters in strings are accepted, like
// `json.load(strict=False)`). YAML is read with the YAML 1.1 schema, as PyYAML's safe_load does.

import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { isInteger, isSafeNumber, parse } from 'lossless-json';
import YAML from 'yaml';

/** A statement or input step: the keys vary (see the README); read them with the accessors below. */
export type StepItem = Record<string, unknown>;

export interface Step {
  statements?: StepItem[];
  inputs?: StepItem[];
  [key: string]: unknown;
}

export interface ColumnDef {
  name: string;
  type: string;
  default?: string;
  [key: string]: unknown;
}

export interface TableSchema {
  name: string;
  type?: string;
  columns?: ColumnDef[];
  [key: string]: unknown;
}

export interface ExpectedEntry {
  query_id: unknown;
  expected_results: unknown;
}

export interface CaseDef {
  id: unknown;
  name?: string;
  description?: string;
  tags?: unknown[];
  steps: Step[];
  expected_results?: ExpectedEntry[];
  [key: string]: unknown;
}

export interface SuiteConfig {
  table_schemas?: TableSchema[];
  setup?: Step;
  tests_2_run?: {
    ids_2_run?: unknown[];
    tags_2_run?: unknown[];
    tags_2_skip?: Record<string, unknown[]>;
  };
  settings_to_run?: unknown[];
  [key: string]: unknown;
}

export interface SuiteFile {
  /** The file name, e.g. `0000_smoke_case.json`. */
  file: string;
  /** Absolute or relative path as given. */
  path: string;
  /** How the suite is named in reports: the file name without extension (with it if ambiguous). */
  label: string;
  /** `test_suite_name` of the file. */
  name: string;
  /** The suite's `tag` (`skip` excludes the whole suite). */
  tag?: string;
  config: SuiteConfig;
  cases: CaseDef[];
}

const SUITE_EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

/** Integers within 2^53 as numbers, beyond as bigint, everything else as a float. */
function parseNumber(text: string): number | bigint {
  if (isInteger(text) && !isSafeNumber(text)) return BigInt(text);
  return Number(text);
}

/** Escape raw control characters inside JSON string literals (what strict=False tolerates). */
export function escapeControlCharsInStrings(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') {
        out += c + (text[i + 1] ?? '');
        i++;
        continue;
      }
      if (c === '"') inString = false;
      const code = c.charCodeAt(0);
      out += code < 0x20 ? `\\u${code.toString(16).padStart(4, '0')}` : c;
    } else {
      if (c === '"') inString = true;
      out += c;
    }
  }
  return out;
}

export function parseJsonCaseText(text: string): unknown {
  const options = { parseNumber, onDuplicateKey: (info: { newValue: unknown }) => info.newValue };
  try {
    return parse(text, null, options);
  } catch (e) {
    const relaxed = escapeControlCharsInStrings(text);
    if (relaxed === text) throw e;
    return parse(relaxed, null, options);
  }
}

/** bigint -> number when exact (YAML's intAsBigInt makes every integer a bigint). */
function normalizeYaml(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(normalizeYaml);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = normalizeYaml(x);
    return out;
  }
  return v;
}

export function parseYamlCaseText(text: string): unknown {
  return normalizeYaml(YAML.parse(text, { version: '1.1', intAsBigInt: true, uniqueKeys: false }));
}

function asRecord(v: unknown, what: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what} is not an object`);
  return v as Record<string, unknown>;
}

/** Parse and check the shape of one suite file's text. */
export function parseSuite(text: string, file: string, path = file): SuiteFile {
  const ext = extname(file).toLowerCase();
  const doc = asRecord(ext === '.json' ? parseJsonCaseText(text) : parseYamlCaseText(text), 'the file');
  const tests = doc.tests;
  if (!Array.isArray(tests)) throw new Error('`tests` is not a list');
  const cases = tests.map((t, i) => {
    const c = asRecord(t, `tests[${i}]`);
    if (c.id === undefined || c.id === null) throw new Error(`tests[${i}] has no id`);
    const steps = c.steps ?? [];
    if (!Array.isArray(steps)) throw new Error(`test ${String(c.id)}: \`steps\` is not a list`);
    steps.forEach((s, j) => {
      const step = asRecord(s, `test ${String(c.id)} steps[${j}]`);
      for (const key of ['statements', 'inputs']) {
        if (step[key] !== undefined && !Array.isArray(step[key]))
          throw new Error(`test ${String(c.id)} steps[${j}].${key} is not a list`);
      }
    });
    const expected = c.expected_results;
    if (expected !== undefined && expected !== null && !Array.isArray(expected))
      throw new Error(`test ${String(c.id)}: \`expected_results\` is not a list`);
    return { ...c, steps, expected_results: expected ?? undefined } as CaseDef;
  });
  const config = (doc.test_suite_config ?? {}) as SuiteConfig;
  return {
    file,
    path,
    label: basename(file, extname(file)),
    name: typeof doc.test_suite_name === 'string' ? doc.test_suite_name : basename(file, extname(file)),
    ...(typeof doc.tag === 'string' ? { tag: doc.tag } : {}),
    config: asRecord(config, 'test_suite_config') as SuiteConfig,
    cases,
  };
}

export function loadSuiteFile(path: string): SuiteFile {
  return parseSuite(readFileSync(path, 'utf8'), basename(path), path);
}

/** The suite files of a directory (json, yaml, yml), sorted by name. */
export function listSuiteFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => SUITE_EXTENSIONS.has(extname(f).toLowerCase()))
    .sort()
    .map((f) => join(dir, f));
}

export interface LoadedSuites {
  suites: SuiteFile[];
  errors: Array<{ file: string; message: string }>;
}

/** Load every suite file of a directory; files that do not parse are reported, not fatal. */
export function loadSuites(dir: string): LoadedSuites {
  const suites: SuiteFile[] = [];
  const errors: LoadedSuites['errors'] = [];
  for (const path of listSuiteFiles(dir)) {
    try {
      suites.push(loadSuiteFile(path));
    } catch (e) {
      errors.push({ file: basename(path), message: e instanceof Error ? e.message : String(e) });
    }
  }
  // two files with the same stem (x.json and x.yaml) keep their extension in reports
  const stems = new Map<string, number>();
  for (const s of suites) stems.set(s.label, (stems.get(s.label) ?? 0) + 1);
  for (const s of suites) if ((stems.get(s.label) ?? 0) > 1) s.label = s.file;
  return { suites, errors };
}

// ---------------------------------------------------------------- accessors for step items

/** A key's value as text (numbers too: query ids are written both ways). */
export function textOf(item: StepItem, key: string): string | undefined {
  const v = item[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** A comma-separated list (`"101,102"`), a single value, or a real list, as trimmed strings. */
export function listOf(item: StepItem, key: string): string[] {
  const v = item[key];
  if (v === undefined || v === null) return [];
  const parts = Array.isArray(v) ? v.map((x) => String(x)) : String(v).split(',');
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

/** The id of a case as text. */
export function caseIdText(c: CaseDef): string {
  return String(c.id);
}
