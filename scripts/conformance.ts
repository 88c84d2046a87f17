// The conformance runner: `npm run conformance [-- <dir>] [options]` (see docs/conformance.md).
// Runs the Proton smoke-test cases of a directory through Tributary's REST API only, against a
// server it starts itself (or one given with --url), and prints one line per case and a summary.
// Exit code 0 unless the runner itself broke (failing cases are reported, not fatal).

import { setMaxListeners } from 'node:events';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiBase, TributaryApi } from './conformance/api-client.ts';
import { type CaseDef, caseIdText, loadSuites, type SuiteFile } from './conformance/case-file.ts';
import { caseTimeoutS } from './conformance/case-runner.ts';
import { caseSkipReason } from './conformance/case-selection.ts';
import { type Options, parseOptions, USAGE } from './conformance/options.ts';
import { type CaseReport, formatCase, formatSummary, writeJsonReport } from './conformance/report.ts';
import { type ServerHandle, startServer } from './conformance/server-process.ts';
import { runSuite } from './conformance/suite-runner.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function selected(suites: SuiteFile[], opts: Options): Array<{ suite: SuiteFile; cases: CaseDef[] }> {
  return suites
    .filter((s) => opts.suites.length === 0 || opts.suites.some((sub) => s.file.includes(sub)))
    .map((suite) => ({
      suite,
      cases: suite.cases.filter((c) => opts.ids.length === 0 || opts.ids.includes(caseIdText(c))),
    }))
    .filter((x) => x.cases.length > 0);
}

function list(plan: Array<{ suite: SuiteFile; cases: CaseDef[] }>, opts: Options): void {
  let run = 0;
  let skipped = 0;
  for (const { suite, cases } of plan) {
    for (const c of cases) {
      const reason = caseSkipReason(suite, c);
      if (reason === undefined) {
        run++;
        out(`${suite.label} ${caseIdText(c)}: run (time limit ${caseTimeoutS(c, opts.timeoutS)}s)`);
      } else {
        skipped++;
        out(`${suite.label} ${caseIdText(c)}: skip (${reason})`);
      }
    }
  }
  out(`${run} to run, ${skipped} to skip`);
}

async function main(): Promise<number> {
  let opts: Options;
  try {
    opts = parseOptions(process.argv.slice(2), repoRoot);
  } catch (e) {
    process.stderr.write(`conformance: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (opts.help) {
    out(USAGE);
    return 0;
  }
  const { suites, errors } = loadSuites(opts.dir);
  for (const e of errors) out(`# ${e.file}: cannot load: ${e.message}`);
  const plan = selected(suites, opts);
  if (plan.length === 0) {
    process.stderr.write(`conformance: no case selected in ${opts.dir}\n`);
    return 2;
  }
  if (opts.list) {
    list(plan, opts);
    return 0;
  }

  const controller = new AbortController();
  setMaxListeners(1000, controller.signal);
  let server: ServerHandle | undefined;
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) {
      // second Ctrl-C: stop right away (the exit hook still kills the server)
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`\nconformance: ${sig}, stopping after the current case is cleaned up\n`);
    controller.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const startedAt = new Date().toISOString();
  const reports: CaseReport[] = [];
  let api: TributaryApi | undefined;
  let exitCode = 0;
  try {
    let baseUrl: string;
    let user = opts.user;
    let password = opts.password ?? '';
    if (opts.url) {
      baseUrl = apiBase(opts.url);
      out(`# server: ${baseUrl} (given with --url)`);
    } else {
      out('# starting Tributary...');
      server = await startServer({ repoRoot, ...(opts.workDir ? { workDir: opts.workDir } : {}) });
      baseUrl = server.baseUrl;
      user = server.user;
      password = server.password;
      out(`# server: ${baseUrl}`);
      out(`# server log: ${server.logFile}`);
    }
    out(`# cases: ${opts.dir}`);
    api = new TributaryApi(baseUrl, { user, password });
    const log = opts.verbose ? (line: string) => process.stderr.write(`${line}\n`) : undefined;
    for (const { suite, cases } of plan) {
      await runSuite(
        {
          api,
          retries: opts.retries,
          timeoutS: opts.timeoutS,
          ...(log ? { log } : {}),
          warn: (l) => out(`# ${l}`),
        },
        suite,
        cases,
        (r) => {
          reports.push(r);
          for (const line of formatCase(r)) out(line);
        },
        controller.signal,
      );
    }
    const extra = [
      ...(server ? [`server log: ${server.logFile}`] : []),
      ...(errors.length > 0 ? [`${errors.length} suite file(s) could not be loaded`] : []),
      ...(interrupted ? ['the run was interrupted'] : []),
    ];
    for (const line of formatSummary(reports, extra)) out(line);
    if (opts.json) {
      writeJsonReport(
        opts.json,
        {
          startedAt,
          finishedAt: new Date().toISOString(),
          directory: opts.dir,
          baseUrl,
          ...(server ? { serverLog: server.logFile } : {}),
          options: { retries: opts.retries, timeout: opts.timeoutS, suites: opts.suites, ids: opts.ids },
          loadErrors: errors,
        },
        reports,
      );
    }
    if (interrupted) exitCode = 130;
  } catch (e) {
    process.stderr.write(`conformance: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    exitCode = 1;
  } finally {
    api?.closeAll();
    if (server) await server.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`conformance: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
