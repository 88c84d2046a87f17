/**
 * `fn`, for binding per request. The TypeScript loader (tsx, esbuild's keepNames) gives every named
 * function a `name` of its own (a defineProperty), which takes V8's `bind` off its fast path:
 * binding such a function costs ~320-460 ns against ~20-25 ns (measured here, Node 20, under tsx).
 * A function or arrow handed to this as an argument is not named by the loader, so binding it stays
 * fast. Use as `const f = bindable((a, b) => ...)`, then `f.bind(undefined, a, b)` per request.
 */
export function bindable<F extends (...args: never[]) => unknown>(fn: F): F {
  return fn;
}
