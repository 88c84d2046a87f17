import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A token bucket for store requests (`s3_max_put_rps` / `s3_max_put_burst`): `rps` tokens a
 * second, at most `burst` kept (the rate when 0); each request takes one, waiting for it when
 * none is left. A rate of 0 never waits.
 */
export class RequestRateLimit {
  private tokens: number;
  private last: number;
  private readonly burst: number;

  constructor(
    private readonly rps: number,
    burst: number,
    private readonly now: () => number = () => performance.now(),
    private readonly wait: (ms: number) => Promise<unknown> = (ms) => sleep(ms),
  ) {
    this.burst = burst > 0 ? burst : Math.max(1, rps);
    this.tokens = this.burst;
    this.last = now();
  }

  /** Take a token, waiting until there is one. Returns the milliseconds waited (by the clock). */
  async take(): Promise<number> {
    if (this.rps <= 0) return 0;
    const began = this.now();
    for (;;) {
      const t = this.now();
      this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.rps) / 1000);
      this.last = t;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return this.now() - began;
      }
      await this.wait(Math.ceil(((1 - this.tokens) * 1000) / this.rps));
    }
  }
}
