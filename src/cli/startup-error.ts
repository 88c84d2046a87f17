/**
 * A reason Tributary cannot start that the operator can fix (a port in use, a data directory in
 * use or unusable): `tributary serve` prints its message as one line and exits 1, no stack trace.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
