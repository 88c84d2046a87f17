import { availableParallelism } from 'node:os';

/**
 * Measures the process's CPU use: each reading is the share of the machine's cores the process
 * used since the previous reading (0-100), sampled at least `minWindowMs` apart.
 */
export class CpuUsage {
  private last = { at: performance.now(), usage: process.cpuUsage() };
  private value = 0;

  constructor(private readonly minWindowMs = 500) {}

  percent(): number {
    const now = performance.now();
    const elapsedMs = now - this.last.at;
    if (elapsedMs >= this.minWindowMs) {
      const delta = process.cpuUsage(this.last.usage);
      const cpuMs = (delta.user + delta.system) / 1000;
      this.value = Math.min(100, (cpuMs / (elapsedMs * availableParallelism())) * 100);
      this.last = { at: now, usage: process.cpuUsage() };
    }
    return Math.round(this.value * 100) / 100;
  }
}
