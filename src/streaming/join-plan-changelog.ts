/* Planning joins with changelog inputs (versioned_kv, changelog_kv, changelog streams, changelog()):
 * dynamic enrichment of an append stream and joins of changelogs (join-program.ts). */
import { call, ident, num } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import { extractAlignment, hasAlignment } from './join-alignment.ts';
import { aliasOf, chainOf, ctesOf, joinName, notImplemented, sourcesIn } from './join-ast.ts';
import { changelogAlignment } from './join-changelog-alignment-plan.ts';
import { LEFT_JOIN_SIGN } from './join-left-netting.ts';
import { leftJoinTouch } from './join-left-touch.ts';
import { aligned, rightJoinKeys } from './join-plan-keyed.ts';
import type { JoinPlan, JoinPlanContext } from './join-planner.ts';
import type { ChangelogJoin } from './join-program.ts';
import { hasRangeCondition } from './join-range.ts';
import type { JoinSideKind } from './join-side-read.ts';
import type { BoundSource } from './stream-bindings.ts';

/**
 * `_tp_delta` in the select list of a join of changelog inputs: the product of its sides' signs
 * (`a._tp_delta * b._tp_delta ...`, each stream side named by its alias in `aliases`; `every`
 * names all sides, `table(dim)` ones too).
 */
function withDelta(
  select: SelectQuery,
  aliases: readonly string[],
  every: readonly string[],
  leftSides: readonly boolean[] = [],
): { select: SelectQuery; deltaColumn?: string } {
  const leftJoin = leftSides.some((l) => l);
  // LEFT JOIN: a left row no right row matches comes with the right side's defaults, its
  // `_tp_delta` 0 there: the row's sign is then the left side's.
  const signOf = (a: string, i: number): Expr =>
    leftSides[i]
      ? call(
          'if',
          { kind: 'Binary', op: '=', left: ident(a, '_tp_delta'), right: num(0), span: NO_SPAN },
          num(1),
          ident(a, '_tp_delta'),
        )
      : ident(a, '_tp_delta');
  const product = aliases
    .map(signOf)
    .reduce((l, r): Expr => ({ kind: 'Binary', op: '*', left: l, right: r, span: NO_SPAN }));
  const delta = (alias: string): Expr => ({
    kind: 'Alias',
    expr: call('to_int8', product),
    alias,
    span: NO_SPAN,
  });
  let deltaColumn: string | undefined;
  const columns = select.columns.flatMap((c): Expr[] => {
    // `*`: every side's columns but its `_tp_delta`, then the row's `_tp_delta` once (0027 id 13).
    if (c.kind === 'Asterisk' && !c.qualifier && !c.except?.length) {
      deltaColumn = '_tp_delta';
      return [
        ...every.map(
          (a): Expr => ({
            kind: 'Asterisk',
            qualifier: [a],
            ...(aliases.includes(a) ? { except: ['_tp_delta'] } : {}),
            span: NO_SPAN,
          }),
        ),
        delta('_tp_delta'),
      ];
    }
    const e = c.kind === 'Alias' ? c.expr : c;
    if (e.kind !== 'Identifier' || e.parts.length !== 1 || e.parts[0] !== '_tp_delta') return [c];
    deltaColumn = c.kind === 'Alias' ? c.alias : '_tp_delta';
    return [delta(deltaColumn)];
  });
  // The netted LEFT JOIN (join-left-netting.ts) sums each row's sign, selected or not.
  if (leftJoin)
    columns.push({ kind: 'Alias', expr: call('to_int8', product), alias: LEFT_JOIN_SIGN, span: NO_SPAN });
  return { select: { ...select, columns }, ...(deltaColumn ? { deltaColumn } : {}) };
}

/**
 * `a.x` where side `a` has no column `x` but exactly one other side has: that side's `x`, as
 * Proton's analyzer resolves it (0014 id 19 writes `a.kk2` for `b.kk2`). Other names unchanged.
 */
function withLenientQualifiers(
  select: SelectQuery,
  sides: readonly { alias: string; columns: ReadonlySet<string> }[],
): SelectQuery {
  return replace(select, (n) => {
    if (n.kind !== 'Identifier') return undefined;
    const parts = (n as unknown as Expr & { kind: 'Identifier' }).parts;
    if (parts.length !== 2) return undefined;
    const [alias, column] = parts as [string, string];
    const side = sides.find((s) => s.alias === alias);
    if (!side || side.columns.has(column)) return undefined;
    const owners = sides.filter((s) => s.columns.has(column));
    if (owners.length !== 1) return undefined;
    return {
      ...(n as object),
      parts: [(owners[0] as { alias: string }).alias, column],
    } as unknown as AnyNode;
  });
}

const WINDOWS = ['tumble', 'hop', 'session'];

/**
 * Joins that read changelog inputs, as a left-deep chain of streams named in the FROM:
 * - an append stream first, then changelog inputs: dynamic enrichment, the later sides read as
 *   their state when a left row comes (join-program.ts EnrichJoin);
 * - changelog inputs only, INNER: a join of changelogs (join-program.ts ChangelogJoin).
 * Anything else is refused, saying what is allowed.
 */
export function planChangelogInputs(
  input: SelectQuery,
  sources: readonly BoundSource[],
  streamJoins: readonly JoinExpr[],
  ctx: JoinPlanContext,
  shape: 'tail' | 'aggregation' | 'window' | 'session',
): Omit<JoinPlan, 'snapshots'> {
  let query = input;
  const top = query.from;
  const items = top ? chainOf(top) : [];
  const spine: JoinExpr[] = [];
  for (let f = top; f?.kind === 'Join'; f = f.left) spine.push(f);
  // `table(dim)` sides are bounded data, read whole in every part (a snapshot, join-planner.ts).
  const bounded = (item: FromItem) => item.kind === 'TableFunction' && item.name.toLowerCase() === 'table';
  const streamItems = items.filter((item, i) => i === 0 || !bounded(item));
  const sides = streamItems.map((item, i) => {
    // The first side may be a window over its stream (`tumble(s, 5s) AS e JOIN kv ...`).
    const arg =
      item.kind === 'TableFunction' && i === 0 && WINDOWS.includes(item.name.toLowerCase())
        ? item.args[0]
        : undefined;
    const name =
      item.kind === 'Table'
        ? item.name
        : arg?.kind === 'Identifier' && arg.parts.length === 1
          ? arg.parts[0]
          : undefined;
    const m = name ? /^__trb_src_(\d+)$/.exec(name) : null;
    const s = m ? sources[Number(m[1])] : undefined;
    return s?.kind === 'stream' ? s : undefined;
  });
  // Any one-stream FROM item (a subquery, a CTE, a window) JOIN one versioned_kv stream: dynamic
  // enrichment with the right side's latest row per key kept in an engine table.
  const onlyJoin = spine.length === 1 ? (spine[0] as JoinExpr) : undefined;
  const leftReads = onlyJoin ? [...sourcesIn(onlyJoin.left, ctesOf(query))] : [];
  const leftSource = leftReads.length === 1 ? sources[leftReads[0] as number] : undefined;
  const rightSide = items.length === 2 ? sides[1] : undefined;
  if (
    onlyJoin &&
    ((leftSource?.kind === 'stream' && leftSource.definition.mode === 'append') ||
      leftSource?.kind === 'derived') &&
    rightSide?.definition.mode === 'versioned_kv' &&
    sources.length === 2
  ) {
    if (onlyJoin.strictness === 'LATEST') {
      // The last row per join key among all the stream's rows, as Proton keeps it (a primary
      // key's row that moved to another join key still stands for the old one: 0018_query_state12
      // ids 355, 361): a plain join over one row per key.
      const { keys } = rightJoinKeys(
        onlyJoin,
        rightSide,
        aliasOf(items[1] as FromItem) as string,
        sources,
        ctx,
      );
      return {
        select: query.from === onlyJoin ? { ...query, from: { ...onlyJoin, strictness: 'ALL' } } : query,
        latestSources: new Map(),
        keyedSources: new Map([[rightSide.index, { versions: 1, keys }]]),
        program: { kind: 'enrich', left: leftSource.index, right: rightSide.index },
      };
    }
    const versions = onlyJoin.strictness === 'ASOF' ? ctx.keepVersions : 1;
    const { on, alignment } = extractAlignment(
      onlyJoin.on,
      aliasOf(onlyJoin.left) ?? '',
      aliasOf(items[1] as FromItem) as string,
    );
    if (alignment && onlyJoin.strictness !== 'ASOF')
      throw notImplemented(
        `Join alignment (lag_behind) with a versioned_kv stream is supported for ASOF JOIN; ${joinName(onlyJoin)} meets the latest row per key`,
      );
    const joined = { ...onlyJoin, ...(on ? { on } : {}) };
    const { query: select, align } = aligned(
      query.from === onlyJoin ? { ...query, from: joined } : query,
      onlyJoin,
      alignment,
      ctx,
    );
    if (onlyJoin.strictness === 'ASOF') {
      // Proton keeps the last keep_versions rows per *join* key (HashJoin.h case 4), history
      // included: a key's replaced rows stay versions until newer rows of the join key push
      // them out (0018_query_state12 id 359).
      const rightAlias = aliasOf(items[1] as FromItem) as string;
      const { keys } = rightJoinKeys(joined, rightSide, rightAlias, sources, ctx);
      return {
        select,
        latestSources: new Map(),
        keyedSources: new Map([[rightSide.index, { versions, keys }]]),
        program: {
          kind: 'enrich',
          left: leftSource.index,
          right: rightSide.index,
          ...(align ? { align } : {}),
        },
      };
    }
    return {
      select,
      latestSources: new Map([[rightSide.index, versions]]),
      program: { kind: 'enrich', left: leftSource.index, right: rightSide.index },
    };
  }
  // Alignment: of an INNER or LEFT join of two changelog inputs (below), or of the shapes above (each handles
  // its own lag_behind, or refuses it).
  const alignedJoin = streamJoins.find((j) => hasAlignment(j.on));
  const twoChangelogs =
    onlyJoin !== undefined &&
    items.length === 2 &&
    (onlyJoin.joinKind === 'INNER' || onlyJoin.joinKind === 'LEFT') &&
    (!onlyJoin.strictness || onlyJoin.strictness === 'ALL') &&
    sides.every((s) => s !== undefined && s.definition.mode !== 'append') &&
    sides.length === sources.length;
  if (alignedJoin && (alignedJoin !== onlyJoin || !twoChangelogs))
    throw notImplemented(
      `Join alignment (lag_behind) in ${joinName(alignedJoin)} with changelog inputs (versioned_kv, changelog_kv, changelog streams, changelog()) is supported for an append stream ASOF JOIN a versioned_kv stream, and for an INNER or LEFT JOIN of two changelog inputs`,
    );
  let align: ChangelogJoin['align'];
  if (alignedJoin && onlyJoin) {
    const pair = sides as Extract<BoundSource, { kind: 'stream' }>[];
    const aliases = items.map((item) => aliasOf(item) as string);
    const { on, alignment } = extractAlignment(onlyJoin.on, aliases[0] as string, aliases[1] as string);
    if (alignment) {
      align = changelogAlignment(alignment, pair, aliases);
      const joined: JoinExpr = { ...onlyJoin, ...(on ? { on } : {}) };
      if (!on) delete (joined as { on?: unknown }).on;
      query = { ...query, from: joined };
    }
  }
  const named = sides.every((s) => s !== undefined) && streamJoins.every((j) => spine.includes(j));
  if (!named || sides.length !== sources.length)
    throw notImplemented(
      'A join of versioned_kv, changelog_kv or changelog streams (or changelog()) is supported as a chain of streams named in the FROM (a JOIN b ON ... JOIN c ON ...), not through subqueries, CTEs or views yet',
    );
  const streams = sides as Extract<BoundSource, { kind: 'stream' }>[];
  const select = withLenientQualifiers(
    query,
    streamItems.map((item, i) => ({
      alias: aliasOf(item) as string,
      columns: new Set([...(streams[i]?.definition.columns.map((c) => c.name) ?? []), '_tp_time', '_tp_sn']),
    })),
  );
  const kindOf = (s: (typeof streams)[number]): JoinSideKind | 'append' =>
    s.definition.mode === 'append' ? 'append' : s.definition.mode === 'changelog' ? 'rows' : 'kv';
  const kinds = streams.map(kindOf);
  for (const j of spine) {
    if (hasRangeCondition(j.on))
      throw notImplemented(
        'A join with a versioned_kv, changelog_kv or changelog stream takes no time range (date_diff_within)',
      );
  }
  const first = streams[0] as (typeof streams)[number];
  if (kinds[0] === 'append') {
    const appendLater = kinds.slice(1).indexOf('append');
    if (appendLater >= 0)
      throw notImplemented(
        `An append stream joined with changelog inputs must come first and alone (a JOIN kv_b JOIN kv_c); ${streams[appendLater + 1]?.definition.name} is an append stream after a changelog input`,
      );
    for (const j of spine) {
      if (j.strictness && j.strictness !== 'ALL' && !bounded(j.right))
        throw notImplemented(
          `${joinName(j)} is supported with one versioned_kv stream on the right only; use INNER JOIN or LEFT JOIN`,
        );
    }
    const states = streams.slice(1).map((s) => s.index);
    return {
      select,
      latestSources: new Map(),
      sideReads: new Map(streams.slice(1).map((s, i) => [s.index, kinds[i + 1] as JoinSideKind])),
      program: { kind: 'enrich', left: first.index, right: states[0] as number, states },
    };
  }
  const append = streams.find((s) => kindOf(s) === 'append');
  if (append)
    throw notImplemented(
      `An append stream (${append.definition.name}) joins changelog inputs only as the first (left-most) side of the join, as a dynamic enrichment`,
    );
  // Changelog inputs LEFT JOINed (Proton: versioned_kv LEFT JOIN versioned_kv since 1.5.7), also in
  // chains mixing LEFT and INNER: a left row no right row matches is there with the right side's
  // defaults until one does. Per side, whether a LEFT JOIN attaches it.
  const leftSides = streamItems.map(
    (item, k) => k > 0 && spine.find((j) => j.right === item)?.joinKind === 'LEFT',
  );
  const leftJoin = leftSides.some((l) => l);
  for (const j of spine) {
    // A bounded right side (table(dim)) joins each change on its own: INNER or LEFT.
    if (!['INNER', 'LEFT'].includes(j.joinKind) || (j.strictness && j.strictness !== 'ALL'))
      throw notImplemented(
        `${joinName(j)} of versioned_kv, changelog_kv or changelog streams is not supported yet; INNER JOIN and LEFT JOIN ... ON <keys> are (any number of sides)`,
      );
  }
  if (shape === 'session')
    throw notImplemented(
      'A session window over a join of versioned_kv, changelog_kv or changelog streams is supported over a subquery that joins them: session((SELECT ... FROM a JOIN b ON ...), t, 5s)',
    );
  // An aggregation over a LEFT JOIN reads it as a subquery (left-changelog-join-nesting.ts); one
  // that reaches here is of another shape.
  if (leftJoin && shape !== 'tail')
    throw notImplemented(
      'Aggregations over a LEFT JOIN of versioned_kv, changelog_kv or changelog streams are supported as GROUP BY or tumble / hop windows over the join (SELECT ... FROM a LEFT JOIN b ON ... GROUP BY ...)',
    );
  const aliases = streamItems.map((item) => aliasOf(item) as string);
  // One LEFT-attached side: its changes read only the left rows its ON's keys touch.
  const leftAt = leftSides.indexOf(true);
  const touched =
    leftSides.filter((l) => l).length === 1
      ? leftJoinTouch(
          spine.find((j) => j.right === streamItems[leftAt])?.on,
          streams.map((s, i) => ({
            alias: aliases[i] as string,
            columns: new Set(s.definition.columns.filter((c) => !c.alias).map((c) => c.name)),
          })),
          leftAt,
          leftSides,
        )
      : undefined;
  const touch = touched && {
    ...touched,
    side: (streams[touched.side] as (typeof streams)[number]).index,
    by: (streams[touched.by] as (typeof streams)[number]).index,
  };
  const signed = withDelta(
    select,
    aliases,
    items.map((item) => aliasOf(item) as string),
    leftSides,
  );
  return {
    select: signed.select,
    latestSources: new Map(),
    sideReads: new Map(streams.map((s, i) => [s.index, kinds[i] as JoinSideKind])),
    program: {
      kind: 'changelog',
      sides: streams.map((s, i) => ({ index: s.index, kind: kinds[i] as JoinSideKind })),
      ...(align ? { align } : {}),
      ...(leftJoin
        ? {
            leftJoin: {
              left: leftSides,
              ...(signed.deltaColumn ? { deltaColumn: signed.deltaColumn } : {}),
              ...(touch ? { touch } : {}),
            },
          }
        : {}),
    },
    ...(shape !== 'tail' ? { deltaOf: aliases } : {}),
  };
}
