import { FailureLimiter, type FailureLimits } from './failure-limiter.ts';

const COMMON = {
  baseBackoffMs: 1000,
  maxBackoffMs: 5 * 60 * 1000,
  forgetAfterMs: 15 * 60 * 1000,
  maxKeys: 10_000,
} as const;

/** Per username: 5 failures, then 1 s, 2 s, 4 s ... up to 5 minutes. */
export const USER_LIMITS: FailureLimits = { ...COMMON, freeFailures: 5 };
/**
 * Per client address: 20 failures, then the same backoff. Higher than per username so that one
 * username under attack is throttled first and the other users behind the same address (a NAT,
 * a proxy) keep logging in; an address that tries many usernames is throttled as a whole.
 */
export const ADDRESS_LIMITS: FailureLimits = { ...COMMON, freeFailures: 20 };

/** An admitted password check: say how it ended (`abandoned`: it could not be checked). */
export interface AuthAttempt {
  succeeded(): void;
  failed(): void;
  abandoned(): void;
}

/**
 * Limits failed password checks per client address and per username. `admit` answers either an
 * attempt to report on, or the seconds to wait (429 TOO_MANY_AUTH_FAILURES with Retry-After,
 * without running scrypt). A success clears the username's failures; an address's failures are
 * only forgotten with time (so one valid account cannot reset an address that sprays others).
 * Usernames are remembered up to 128 characters.
 */
export class AuthThrottle {
  private readonly users: FailureLimiter;
  private readonly addresses: FailureLimiter;

  constructor(options: { user?: FailureLimits; address?: FailureLimits; now?: () => number } = {}) {
    this.users = new FailureLimiter(options.user ?? USER_LIMITS, options.now);
    this.addresses = new FailureLimiter(options.address ?? ADDRESS_LIMITS, options.now);
  }

  admit(address: string, username: string): AuthAttempt | { retryAfterSeconds: number } {
    const user = username.slice(0, 128);
    const wait = Math.max(this.users.waitMs(user), this.addresses.waitMs(address));
    if (wait > 0) return { retryAfterSeconds: Math.ceil(wait / 1000) };
    this.users.begin(user);
    this.addresses.begin(address);
    let ended = false;
    const end = (failed: boolean, reset: boolean) => {
      if (ended) return;
      ended = true;
      this.users.end(user, failed, reset);
      this.addresses.end(address, failed, false);
    };
    return {
      succeeded: () => end(false, true),
      failed: () => end(true, false),
      abandoned: () => end(false, false),
    };
  }

  /** Remembered usernames and addresses (bounded by maxKeys each). */
  size(): { users: number; addresses: number } {
    return { users: this.users.size(), addresses: this.addresses.size() };
  }
}
