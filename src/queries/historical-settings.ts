import type { EngineSettings } from '../engine/engine.ts';

/**
 * Engine settings every historical query (and the DESCRIBE of its result) runs with, where the
 * engine's defaults resolve names differently from Proton: `JOIN ... USING (k)` may name a select
 * alias of the left side (`SELECT number AS k FROM t JOIN u USING k`), as in Proton; `neighbor`
 * is allowed.
 */
export const HISTORICAL_ENGINE_SETTINGS: EngineSettings = {
  analyzer_compatibility_join_using_top_level_identifier: 1,
  // `neighbor(x, offset[, default])` works as in Proton although the engine deprecates it.
  allow_deprecated_error_prone_window_functions: 1,
};
