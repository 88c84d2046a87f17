import type { SavedSessions } from '../session-tracker.ts';

/** The in-memory state of a streaming execution as a checkpoint keeps it (JSON, version 1). */
export interface SavedState {
  version: 1;
  /** Per source (cursor order): the last `_tp_sn` processed. */
  after: number[];
  emitted: number;
  emitVersion: number;
  batch: number;
  lastEmittedBatch: number;
  dedupSteps: number;
  newSinceEmit: boolean;
  backfill: boolean;
  timedOut: boolean;
  /** When the next periodic emit was due (epoch ms; null without PERIODIC). */
  nextPeriodic: number | null;
  lastEventTime: number;
  watermarks: Array<[string, string | null, string | null]>;
  versionBases: Array<[string, number]>;
  substreamVersions: Array<[string, number]>;
  /** CHANGELOG: per group key, the last row emitted (lossless JSON text). */
  lastEmitted: Array<[string, string]>;
  carried: unknown[][];
  carriedByKey: Array<Array<[string, unknown[]]>>;
  sessions?: SavedSessions;
  /** The program's start positions when the run began (joins read the other sides from them). */
  startAfter: number[];
  /** What the step inputs keep (join watermarks, ...). */
  inputs?: unknown;
  /** A nested execution: the sequence number its next derived row gets. */
  derivedNext?: number;
}
