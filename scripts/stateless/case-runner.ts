// Runs one historical-SQL case (NAME.sql against NAME.reference) through Tributary's REST API, as
// Proton's test client ran it: statement after statement on one "connection" (SETs carry over:
// each later statement is sent after the SETs so far, in the same request, see
// docs/sql-reference.md "SET"), bounded queries (`type: historical`, as the references hold the
// finite results of table-mode queries), error hints checked, echo mode honoured, each result
// printed in its FORMAT; the concatenation is compared with the reference. The first unexpected
// error stops the case, as it stopped the client.

import { readFileSync } from 'node:fs';
import type { TributaryApi } from '../conformance/api-client.ts';
import { AbortedError } from '../conformance/timing.ts';
import { formatOf, renderResult, UnsupportedFormat } from './result-format.ts';
import { type ScriptStatement, splitScript } from './script-splitter.ts';
import { callStatement } from './statement-call.ts';
import { hintsOf } from './test-hints.ts';

export interface CaseFiles {
  name: string;
  sqlPath: string;
  referencePath: string | undefined;
}

export interface FirstDifference {
  /** 1-based line of the output. */
  line: number;
  expected: string | undefined;
  actual: string | undefined;
}

export interface CaseReport {
  name: string;
  status: 'pass' | 'fail' | 'skip';
  /** Skip reason, or the first failure (an unexpected error, a missed expected error, a difference). */
  reason?: string;
  /** The statement where the case stopped or went wrong (1-based line in the .sql, and its text). */
  statement?: { line: number; sql: string };
  /** The error the server answered there, if any. */
  error?: { code: number | undefined; message: string };
  firstDifference?: FirstDifference;
  statements: number;
  durationMs: number;
}

export interface CaseOptions {
  /** Time limit of the whole case. */
  timeoutMs: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

const SET = /^\s*SET\s/i;

function clip(s: string, max = 300): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}...` : one;
}

/** The first line where two outputs differ (trailing newlines ignored). */
export function firstDifference(expected: string, actual: string): FirstDifference | undefined {
  const e = expected.replace(/\n+$/, '');
  const a = actual.replace(/\n+$/, '');
  if (e === a) return undefined;
  const el = e === '' ? [] : e.split('\n');
  const al = a === '' ? [] : a.split('\n');
  for (let i = 0; i < Math.max(el.length, al.length); i++) {
    if (el[i] !== al[i]) return { line: i + 1, expected: el[i], actual: al[i] };
  }
  return undefined;
}

interface Session {
  sets: string[];
  echo: boolean;
  out: string;
}

/** The request body's extra fields: bounded unless the script asked for streaming. */
function requestExtra(session: Session): Record<string, unknown> {
  const streaming = session.sets.some((s) => /\bquery_mode\s*=\s*'streaming'/i.test(s));
  return streaming ? {} : { type: 'historical' };
}

function withSets(session: Session, sql: string): string {
  return session.sets.length === 0 ? sql : `${session.sets.join(';\n')};\n${sql}`;
}

type StepResult =
  | { ok: true }
  | { ok: false; report: Omit<CaseReport, 'name' | 'statements' | 'durationMs'> };

async function runStatement(
  api: TributaryApi,
  st: ScriptStatement,
  session: Session,
  signal: AbortSignal,
): Promise<StepResult> {
  const hints = hintsOf(st);
  if (hints.echo !== undefined) session.echo = hints.echo;
  if (session.echo) session.out += `${st.echoText}\n`;
  const where = { line: st.line, sql: clip(st.sql) };
  if (hints.unknownNames.length > 0 && hints.errors.length === 0) {
    return {
      ok: false,
      report: {
        status: 'fail',
        reason: `line ${st.line}: the hint names unknown error(s) ${hints.unknownNames.join(', ')}`,
        statement: where,
      },
    };
  }
  const answer = await callStatement(api, withSets(session, st.sql), requestExtra(session), signal);
  if (hints.errors.length > 0) {
    if (answer.kind !== 'error') {
      return {
        ok: false,
        report: {
          status: 'fail',
          reason: `line ${st.line}: expected error ${hints.errors.join(' or ')}, but the statement succeeded`,
          statement: where,
        },
      };
    }
    if (answer.code === undefined || !hints.errors.includes(answer.code)) {
      return {
        ok: false,
        report: {
          status: 'fail',
          reason: `line ${st.line}: expected error ${hints.errors.join(' or ')}, got ${answer.code ?? 'no code'}: ${clip(answer.message, 200)}`,
          statement: where,
          error: { code: answer.code, message: answer.message },
        },
      };
    }
    return { ok: true };
  }
  if (answer.kind === 'error') {
    return {
      ok: false,
      report: {
        status: 'fail',
        reason: `line ${st.line}: error ${answer.code ?? '(no code)'}: ${clip(answer.message, 200)}`,
        statement: where,
        error: { code: answer.code, message: answer.message },
      },
    };
  }
  if (SET.test(st.code)) session.sets.push(st.sql);
  if (answer.kind === 'rows') {
    try {
      session.out += renderResult(formatOf(st.code), answer.columns, answer.rows);
    } catch (e) {
      if (e instanceof UnsupportedFormat) {
        return { ok: false, report: { status: 'skip', reason: e.message, statement: where } };
      }
      throw e;
    }
  }
  return { ok: true };
}

/** Run one case to its report (never throws for a case's own failures). */
export async function runCase(api: TributaryApi, files: CaseFiles, opts: CaseOptions): Promise<CaseReport> {
  const started = Date.now();
  const done = (r: Omit<CaseReport, 'name' | 'durationMs'>): CaseReport => ({
    name: files.name,
    ...r,
    durationMs: Date.now() - started,
  });
  if (!files.referencePath) return done({ status: 'skip', reason: 'no .reference file', statements: 0 });
  const script = readFileSync(files.sqlPath, 'utf8');
  const reference = readFileSync(files.referencePath, 'utf8');
  const statements = splitScript(script);
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`timed out after ${opts.timeoutMs / 1000}s`)),
    opts.timeoutMs,
  );
  const onOuterAbort = () => controller.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const session: Session = { sets: [], echo: false, out: '' };
  let current: ScriptStatement | undefined;
  try {
    for (const st of statements) {
      current = st;
      opts.log?.(`${files.name}:${st.line}: ${clip(st.sql, 200)}`);
      const step = await runStatement(api, st, session, controller.signal);
      if (!step.ok) {
        const diff = firstDifference(reference, session.out);
        return done({
          ...step.report,
          ...(step.report.status === 'fail' && diff ? { firstDifference: diff } : {}),
          statements: statements.length,
        });
      }
    }
  } catch (e) {
    const aborted = controller.signal.aborted || e instanceof AbortedError;
    const message = aborted
      ? ((controller.signal.reason as Error | undefined)?.message ?? 'aborted')
      : (e as Error).message;
    return done({
      status: 'fail',
      reason: `${current ? `line ${current.line}: ` : ''}${message}`,
      ...(current ? { statement: { line: current.line, sql: clip(current.sql) } } : {}),
      statements: statements.length,
    });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuterAbort);
  }
  const diff = firstDifference(reference, session.out);
  if (!diff) return done({ status: 'pass', statements: statements.length });
  return done({
    status: 'fail',
    reason: `output line ${diff.line}: expected ${JSON.stringify(diff.expected ?? '(end)')}, got ${JSON.stringify(diff.actual ?? '(end)')}`,
    firstDifference: diff,
    statements: statements.length,
  });
}
