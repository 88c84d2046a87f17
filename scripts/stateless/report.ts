// Output of the stateless runner: one line per case (`PASS name`, `FAIL name reason`,
// `SKIP name reason`), the summary line `N passed, N failed, N skipped`, and a JSON report.

import { writeFileSync } from 'node:fs';
import type { CaseReport } from './case-runner.ts';

export function caseLine(r: CaseReport): string {
  const reason = r.reason ? ` ${r.reason.replace(/\s+/g, ' ')}` : '';
  return `${r.status.toUpperCase()} ${r.name}${r.status === 'pass' ? '' : reason}`;
}

export interface Totals {
  passed: number;
  failed: number;
  skipped: number;
}

export function totals(reports: readonly CaseReport[]): Totals {
  return {
    passed: reports.filter((r) => r.status === 'pass').length,
    failed: reports.filter((r) => r.status === 'fail').length,
    skipped: reports.filter((r) => r.status === 'skip').length,
  };
}

export function summaryLine(reports: readonly CaseReport[]): string {
  const t = totals(reports);
  return `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`;
}

export interface StatelessRunInfo {
  startedAt: string;
  finishedAt: string;
  directory: string;
  jobs: number;
  timeoutS: number;
  serverLogs: string[];
}

export function writeStatelessJson(
  path: string,
  info: StatelessRunInfo,
  reports: readonly CaseReport[],
): void {
  const sorted = [...reports].sort((a, b) => a.name.localeCompare(b.name));
  writeFileSync(path, `${JSON.stringify({ ...info, total: totals(reports), cases: sorted }, null, 2)}\n`);
}
