/** Bounded polling for sync tests (no timing assertions: only "eventually, within a generous bound"). */

/** Poll `fn` until `ok` holds; throws with the last value after `ms`. */
export async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 15_000, every = 50): Promise<T> {
  const end = Date.now() + ms;
  let last: T;
  for (;;) {
    last = await fn();
    if (ok(last)) return last;
    if (Date.now() > end)
      throw new Error(`condition not met within ${ms} ms; last value: ${JSON.stringify(last)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, every));
  }
}
