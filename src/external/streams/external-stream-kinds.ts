/**
 * Every kind of external stream Tributary has: importing this module registers them all. Add a
 * kind (e.g. `log`, `timeplus`) by writing its module next to http-external-stream.ts and
 * importing it here.
 */
import './http-external-stream.ts';
import './log-external-stream.ts';
import './timeplus-external-stream.ts';

export { externalStreamKind } from './external-stream-kind.ts';
