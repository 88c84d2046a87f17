// Output of the conformance runner: one line per case (`<suite> <id>: pass | fail | skip (reason)`),
// a short diff under failures, a summary per suite and in total, ending with the line
// `N passed, N failed, N skipped`; and the same results as JSON.

import { writeFileSync } from 'node:fs';

export interface CaseReport {
  suite: string;
  file: string;
  id: string;
  name?: string;
  status: 'pass' | 'fail' | 'skip';
  /** Skip reason, or the first failure. */
  reason?: string;
  /** Attempts made (0 for skipped cases). A pass with attempts > 1 passed only after a retry. */
  attempts: number;
  durationMs: number;
  /** Diff lines and notes of a failure. */
  details: string[];
}

export interface SuiteSummary {
  suite: string;
  passed: number;
  failed: number;
  skipped: number;
  passedAfterRetry: number;
}

const MAX_DETAIL_LINES = 14;

function clip(s: string, max = 400): string {
  return s.length > max ? `${s.slice(0, max)}...` : s;
}

/** The lines printed for one case. */
export function formatCase(r: CaseReport): string[] {
  const head = `${r.suite} ${r.id}`;
  if (r.status === 'skip') return [`${head}: skip (${r.reason ?? 'no reason'})`];
  if (r.status === 'pass') {
    const retries = r.attempts - 1;
    return [`${head}: pass${retries > 0 ? ` (after ${retries} retr${retries === 1 ? 'y' : 'ies'})` : ''}`];
  }
  const lines = [`${head}: fail${r.reason ? ` (${clip(r.reason.split('\n')[0] ?? '', 200)})` : ''}`];
  // the first problem is already on the case's line
  const rest = r.details.filter((d) => d !== r.reason && d !== `fatal: ${r.reason}`);
  const details = rest.slice(0, MAX_DETAIL_LINES).map((d) => `    ${clip(d)}`);
  if (rest.length > MAX_DETAIL_LINES) details.push(`    ... ${rest.length - MAX_DETAIL_LINES} more lines`);
  return [...lines, ...details];
}

export function summarize(reports: readonly CaseReport[]): { suites: SuiteSummary[]; total: SuiteSummary } {
  const bySuite = new Map<string, SuiteSummary>();
  const total: SuiteSummary = { suite: 'total', passed: 0, failed: 0, skipped: 0, passedAfterRetry: 0 };
  for (const r of reports) {
    let s = bySuite.get(r.suite);
    if (!s) {
      s = { suite: r.suite, passed: 0, failed: 0, skipped: 0, passedAfterRetry: 0 };
      bySuite.set(r.suite, s);
    }
    for (const acc of [s, total]) {
      if (r.status === 'pass') {
        acc.passed++;
        if (r.attempts > 1) acc.passedAfterRetry++;
      } else if (r.status === 'fail') acc.failed++;
      else acc.skipped++;
    }
  }
  return { suites: [...bySuite.values()], total };
}

/** The summary table; its last line is exactly `N passed, N failed, N skipped`. */
export function formatSummary(reports: readonly CaseReport[], extra: string[] = []): string[] {
  const { suites, total } = summarize(reports);
  const width = Math.max(5, ...suites.map((s) => s.suite.length));
  const row = (name: string, s: SuiteSummary) =>
    `${name.padEnd(width)}  ${String(s.passed).padStart(6)}  ${String(s.failed).padStart(6)}  ${String(s.skipped).padStart(7)}  ${String(s.passedAfterRetry).padStart(12)}`;
  return [
    '',
    `${'suite'.padEnd(width)}  ${'passed'.padStart(6)}  ${'failed'.padStart(6)}  ${'skipped'.padStart(7)}  ${'after retry'.padStart(12)}`,
    ...suites.map((s) => row(s.suite, s)),
    row('total', total),
    '',
    `${total.passedAfterRetry} of ${total.passed} passed case${total.passed === 1 ? '' : 's'} passed only after a retry`,
    ...extra,
    `${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`,
  ];
}

export interface RunInfo {
  startedAt: string;
  finishedAt: string;
  directory: string;
  baseUrl: string;
  serverLog?: string;
  options: Record<string, unknown>;
  loadErrors: Array<{ file: string; message: string }>;
}

export function writeJsonReport(path: string, info: RunInfo, reports: readonly CaseReport[]): void {
  const { suites, total } = summarize(reports);
  writeFileSync(path, `${JSON.stringify({ ...info, suites, total, cases: reports }, null, 2)}\n`);
}
