// Command line of `npm run conformance [-- <dir>] [options]`.

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export interface Options {
  dir: string;
  suites: string[];
  ids: string[];
  url: string | undefined;
  user: string;
  password: string | undefined;
  retries: number;
  timeoutS: number;
  json: string | undefined;
  verbose: boolean;
  list: boolean;
  workDir: string | undefined;
  help: boolean;
}

export const USAGE = `Usage: npm run conformance [-- <dir>] [options]

Runs the streaming-SQL conformance cases of <dir> (default ../shared/conformance/proton-smoke)
through Tributary's REST API and prints one line per case and a summary.

Options:
  --suite <substring>   only suite files whose name contains it (repeatable, or comma-separated)
  --id <id>             only cases with this id (repeatable, or comma-separated)
  --url <base>          use a running server (e.g. http://127.0.0.1:8000) instead of starting one
  --user <name>         user for --url (default admin)
  --password <pw>       password for --url (default $TRIBUTARY_ADMIN_PASSWORD)
  --retries <n>         runs of a failing case after the first (default 2, i.e. 3 attempts)
  --timeout <s>         time limit per case attempt in seconds (default 60; raised to the case's
                        scripted waits plus half of it when those are longer)
  --json <path>         also write the results as JSON
  --work-dir <path>     where the started server keeps its log and data (default a temp dir)
  --list                list the cases and what would be skipped, run nothing
  --verbose             print every statement and ingest as it runs (stderr)
  --help                this text
`;

function splitList(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

function nonNegativeInt(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/** Parse the arguments; `repoRoot` anchors the default directory. */
export function parseOptions(
  argv: string[],
  repoRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      suite: { type: 'string', multiple: true },
      id: { type: 'string', multiple: true },
      url: { type: 'string' },
      user: { type: 'string' },
      password: { type: 'string' },
      retries: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'string' },
      'work-dir': { type: 'string' },
      list: { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals.length > 1) throw new Error(`expected at most one directory, got ${positionals.join(' ')}`);
  const timeoutS = nonNegativeInt(values.timeout, '--timeout', 60);
  if (timeoutS === 0) throw new Error('--timeout must be at least 1 second');
  return {
    dir: resolve(positionals[0] ?? resolve(repoRoot, '../shared/conformance/proton-smoke')),
    suites: splitList(values.suite),
    ids: splitList(values.id),
    url: values.url,
    user: values.user ?? 'admin',
    password: values.password ?? env.TRIBUTARY_ADMIN_PASSWORD,
    retries: nonNegativeInt(values.retries, '--retries', 2),
    timeoutS,
    json: values.json ? resolve(values.json) : undefined,
    verbose: values.verbose ?? false,
    list: values.list ?? false,
    workDir: values['work-dir'] ? resolve(values['work-dir']) : undefined,
    help: values.help ?? false,
  };
}
