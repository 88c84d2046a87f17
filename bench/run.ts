// Benchmark dispatcher: `npm run bench -- <name> [args...]` imports bench/<name>.ts and runs its
// default export with the remaining arguments.
import { existsSync, readdirSync } from 'node:fs';

const [name, ...args] = process.argv.slice(2);
const here = new URL('.', import.meta.url);
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && f !== 'bench-args.ts')
  .map((f) => f.slice(0, -3));
if (!name || !existsSync(new URL(`${name}.ts`, here))) {
  console.error(`usage: npm run bench -- <name>; available: ${available.join(', ') || '(none)'}`);
  process.exit(2);
}
const mod = (await import(new URL(`${name}.ts`, here).href)) as { default?: (args: string[]) => unknown };
if (typeof mod.default !== 'function') {
  console.error(`bench/${name}.ts has no default export to run`);
  process.exit(2);
}
await mod.default(args);
