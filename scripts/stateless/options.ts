// Command line of `npm run stateless [-- <dir>] [options]`.

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export interface StatelessOptions {
  dir: string;
  only: string[];
  json: string | undefined;
  jobs: number;
  timeoutS: number;
  workDir: string | undefined;
  verbose: boolean;
  help: boolean;
}

export const STATELESS_USAGE = `Usage: npm run stateless [-- <dir>] [options]

Runs the historical-SQL cases of <dir> (NAME.sql with NAME.reference; default
../shared/conformance/proton-stateless) through Tributary's REST API, against servers it starts
itself, and prints one line per case (PASS / FAIL / SKIP) and the summary
"N passed, N failed, N skipped".

Options:
  --only <substring>    only cases whose name contains it (repeatable, or comma-separated)
  --json <path>         also write the results as JSON (every failure with its first differing
                        line or its error)
  --jobs <n>            cases run side by side, each job on its own server (default 1)
  --timeout <s>         time limit of one case in seconds (default 60)
  --work-dir <path>     where the servers keep their logs and data (default a temp dir each)
  --verbose             print every statement as it is sent (stderr)
  --help                this text
`;

function positiveInt(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new Error(`${name} must be a whole number of at least 1, got "${raw}"`);
  return Number(raw);
}

export function parseStatelessOptions(argv: string[], repoRoot: string): StatelessOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      only: { type: 'string', multiple: true },
      json: { type: 'string' },
      jobs: { type: 'string' },
      timeout: { type: 'string' },
      'work-dir': { type: 'string' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length > 1) throw new Error(`expected at most one directory, got ${positionals.join(' ')}`);
  return {
    dir: resolve(positionals[0] ?? resolve(repoRoot, '../shared/conformance/proton-stateless')),
    only: (values.only ?? [])
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter((v) => v.length > 0),
    json: values.json ? resolve(values.json) : undefined,
    jobs: positiveInt(values.jobs, '--jobs', 1),
    timeoutS: positiveInt(values.timeout, '--timeout', 60),
    workDir: values['work-dir'] ? resolve(values['work-dir']) : undefined,
    verbose: values.verbose ?? false,
    help: values.help ?? false,
  };
}
