/** An Invocation with other flag values: how a vault-face command reuses keyhold's `run`. */
import type { Invocation, Values } from '../command.js';

/** `inv` with `opts` in place of its flag values (everything else, the lazy client too, shared). */
export function withOpts(inv: Invocation, opts: Values): Invocation {
  const out = Object.create(inv) as Invocation;
  Object.defineProperty(out, 'opts', { value: opts, enumerable: true });
  return out;
}
