// The historical-SQL conformance runner: `npm run stateless [-- <dir>] [options]` (see
// docs/conformance.md). Runs the NAME.sql / NAME.reference cases of a directory through
// Tributary's REST API, against servers it starts itself (one per job), and prints one line per
// case and the summary line `N passed, N failed, N skipped`. Exit code 0 unless the runner itself
// broke (failing cases are reported, not fatal).

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TributaryApi } from './conformance/api-client.ts';
import { type ServerHandle, startServer } from './conformance/server-process.ts';
import { type CatalogSnapshot, restoreCatalog, snapshotCatalog } from './stateless/case-cleanup.ts';
import { listCases } from './stateless/case-list.ts';
import { type CaseFiles, type CaseReport, runCase } from './stateless/case-runner.ts';
import { parseStatelessOptions, STATELESS_USAGE, type StatelessOptions } from './stateless/options.ts';
import { caseLine, summaryLine, writeStatelessJson } from './stateless/report.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** One job: a server of its own and the cases it takes from the shared queue. */
class Job {
  private server: ServerHandle | undefined;
  private api: TributaryApi | undefined;
  readonly logs: string[] = [];

  constructor(
    private readonly index: number,
    private readonly opts: StatelessOptions,
  ) {}

  private async start(): Promise<TributaryApi> {
    const workDir = this.opts.workDir
      ? join(this.opts.workDir, `job-${this.index}-${this.logs.length}`)
      : undefined;
    if (workDir) mkdirSync(workDir, { recursive: true });
    this.server = await startServer({ repoRoot, ...(workDir ? { workDir } : {}) });
    this.logs.push(this.server.logFile);
    out(`# job ${this.index}: server ${this.server.baseUrl}, log ${this.server.logFile}`);
    this.api = new TributaryApi(this.server.baseUrl, {
      user: this.server.user,
      password: this.server.password,
    });
    return this.api;
  }

  private async alive(): Promise<boolean> {
    if (!this.api) return false;
    try {
      const r = await this.api.request('GET', '/info', undefined, { timeoutMs: 15_000 });
      return r.status > 0 && r.status < 500;
    } catch {
      return false;
    }
  }

  async stop(): Promise<void> {
    this.api?.closeAll();
    await this.server?.stop();
    this.server = undefined;
    this.api = undefined;
  }

  async run(c: CaseFiles, signal: AbortSignal): Promise<CaseReport> {
    let api = this.api ?? (await this.start());
    const log = this.opts.verbose ? (l: string) => process.stderr.write(`${l}\n`) : undefined;
    let before: CatalogSnapshot;
    try {
      before = await snapshotCatalog(api, signal);
    } catch (e) {
      // a server that broke after the previous case: start a new one
      out(`# job ${this.index}: the server does not answer (${(e as Error).message}); restarting it`);
      await this.stop();
      api = await this.start();
      before = await snapshotCatalog(api, signal);
    }
    const report = await runCase(api, c, {
      timeoutMs: this.opts.timeoutS * 1000,
      signal,
      ...(log ? { log } : {}),
    });
    if (!(await this.alive())) {
      report.reason = `${report.reason ?? ''} (the server stopped answering; restarted)`.trim();
      if (report.status === 'pass') report.status = 'fail';
      await this.stop();
      return report;
    }
    try {
      const problems = await restoreCatalog(api, before, signal);
      for (const p of problems) out(`# ${c.name}: cleanup: ${p}`);
    } catch (e) {
      out(`# ${c.name}: cleanup failed: ${(e as Error).message}`);
    }
    return report;
  }
}

async function main(): Promise<number> {
  let opts: StatelessOptions;
  try {
    opts = parseStatelessOptions(process.argv.slice(2), repoRoot);
  } catch (e) {
    process.stderr.write(`stateless: ${(e as Error).message}\n\n${STATELESS_USAGE}`);
    return 2;
  }
  if (opts.help) {
    out(STATELESS_USAGE);
    return 0;
  }
  let cases: CaseFiles[];
  try {
    cases = listCases(opts.dir, opts.only);
  } catch (e) {
    process.stderr.write(`stateless: cannot read ${opts.dir}: ${(e as Error).message}\n`);
    return 2;
  }
  if (cases.length === 0) {
    process.stderr.write(`stateless: no case selected in ${opts.dir}\n`);
    return 2;
  }
  out(`# cases: ${opts.dir} (${cases.length})`);
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\nstateless: ${sig}, stopping\n`);
    controller.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const startedAt = new Date().toISOString();
  const reports: CaseReport[] = [];
  const jobs = Array.from({ length: Math.min(opts.jobs, cases.length) }, (_, i) => new Job(i + 1, opts));
  const queue = [...cases];
  let exitCode = 0;
  try {
    await Promise.all(
      jobs.map(async (job) => {
        for (;;) {
          const c = queue.shift();
          if (!c || controller.signal.aborted) return;
          const r = await job.run(c, controller.signal);
          reports.push(r);
          out(caseLine(r));
        }
      }),
    );
    if (interrupted) out('# the run was interrupted');
    out(summaryLine(reports));
    if (opts.json) {
      writeStatelessJson(
        opts.json,
        {
          startedAt,
          finishedAt: new Date().toISOString(),
          directory: opts.dir,
          jobs: jobs.length,
          timeoutS: opts.timeoutS,
          serverLogs: jobs.flatMap((j) => j.logs),
        },
        reports,
      );
    }
    if (interrupted) exitCode = 130;
  } catch (e) {
    process.stderr.write(`stateless: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    exitCode = 1;
  } finally {
    await Promise.all(jobs.map((j) => j.stop()));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`stateless: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
