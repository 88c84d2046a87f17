// Random streams: what a generator costs. `npm run bench -- random [--seconds 10]`
// An in-process Tributary; for each eps, CREATE RANDOM STREAM (two columns with DEFAULTs, one
// random by type), one streaming reader subscribed (the generator runs), and the process CPU time
// and the rows committed over `seconds`, beside the same time with no reader (nothing generated).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SYSTEM_ACTOR } from '../src/catalog/audit.ts';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { silentLogger } from '../src/log/logger.ts';

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export default async function main(args: string[]): Promise<void> {
  const seconds = arg(args, 'seconds', 10);
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-random-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: 'bench-random', logLevel: 'silent' },
    silentLogger(),
  );
  const { randoms, streams } = trb.services;
  if (!randoms) throw new Error('random streams are not enabled');
  try {
    const idleCpu0 = cpuMs();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const idle = (cpuMs() - idleCpu0) / seconds;
    console.log(
      `random streams bench, ${seconds} s per figure; process CPU with nothing running: ${idle.toFixed(0)} ms/s`,
    );
    console.log(
      '| eps | interval_time | rows/s committed | process CPU, ms/s | CPU above idle per 1,000 rows |',
    );
    console.log('|---:|---:|---:|---:|---:|');
    for (const [eps, interval] of [
      [1000, 100],
      [10_000, 100],
      [100_000, 100],
      [1000, 5],
    ] as const) {
      const name = `r_${eps}_${interval}`;
      await randoms.create(
        {
          db: 'default',
          name,
          columns: [
            { name: 'device', type: 'string', default: "'device_' || to_string(rand() % 100)" },
            { name: 'temperature', type: 'float64', default: 'rand() % 1000 / 10' },
            { name: 'reading', type: 'int32' },
          ],
          settings: { eps, interval_time: interval },
        },
        SYSTEM_ACTOR,
      );
      const generator = randoms.generator(`default.${name}`);
      if (!generator) throw new Error('no generator');
      const before = streams.committedSn('default', name);
      const cpu0 = cpuMs();
      generator.acquire();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      generator.release();
      const cpu = (cpuMs() - cpu0) / seconds;
      const rows = (streams.committedSn('default', name) - before) / seconds;
      const per1000 = rows > 0 ? ((cpu - idle) / rows) * 1000 : 0;
      console.log(
        `| ${eps} | ${interval} | ${Math.round(rows)} | ${cpu.toFixed(0)} | ${per1000.toFixed(1)} ms |`,
      );
    }
  } finally {
    await trb.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
