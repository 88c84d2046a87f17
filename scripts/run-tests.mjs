#!/usr/bin/env node
// Runs the test suites with Node's own runner, TypeScript through tsx.
// Usage: node scripts/run-tests.mjs [unit|integration|e2e ...] [--only <substring>]
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const SUITES = ['unit', 'integration', 'e2e'];
const args = process.argv.slice(2);
const onlyIdx = args.indexOf('--only');
const only = onlyIdx >= 0 ? args[onlyIdx + 1] : undefined;
const picked = args.filter((a, i) => SUITES.includes(a) && i !== onlyIdx + 1);
for (const a of args) {
  if (!a.startsWith('--') && !SUITES.includes(a) && a !== only) {
    console.error(`unknown test suite "${a}"; expected one of ${SUITES.join(', ')}`);
    process.exit(2);
  }
}
const suites = picked.length ? picked : SUITES;
const files = suites.flatMap((s) => {
  const dir = join('test', s);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => !only || f.includes(only))
    .sort()
    .map((f) => join(dir, f));
});
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=180000', ...files],
  { stdio: 'inherit', env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16' } },
);
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
