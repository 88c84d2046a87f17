export { sameTree, withoutSpans } from './compare.ts';
export type * from './expression.ts';
export type * from './query.ts';
export { type LineColumn, lineColumn, NO_SPAN, type Span, spanOf } from './span.ts';
export type * from './statement.ts';
export { type AnyNode, childNodes, findAll, isNode, replace, transform, walk } from './walk.ts';
