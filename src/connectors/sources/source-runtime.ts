/** Writes a source's events into its target stream, counting successes and failures. */
export interface SourceWriter {
  write(events: Array<Record<string, unknown>>): Promise<void>;
}

/** A running source of any type. */
export interface SourceRuntime {
  start(): void;
  stop(): Promise<void>;
}
