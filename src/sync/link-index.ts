/**
 * Which links each KV secret has (accessor + secret name -> link keys), in memory: a KV change
 * event finds the links to sync again, and LIST sys/sync/associations lists them, without reading
 * every link record. Loaded at start; set, remove and the worker keep it up to date.
 */
import { DESTINATION_TYPES } from './destinations/index.js';
import type { SyncStore } from './store.js';
import { linkKey, parseLinkKey } from './types.js';

/** Link keys by secret. */
export class LinkIndex {
  /** accessor + "\0" + secret name -> link keys. */
  private readonly bySecret = new Map<string, Set<string>>();

  /** Index every stored link. */
  async load(store: SyncStore): Promise<void> {
    for (const type of Object.keys(DESTINATION_TYPES)) {
      for (const name of await store.destNames(type as never)) {
        for (const id of await store.linkIds(type, name)) this.add(linkKey(type, name, id));
      }
    }
  }

  /** Register a link. */
  add(key: string): void {
    const s = secretOfId(parseLinkKey(key).id);
    const k = `${s.accessor}\0${s.secret}`;
    let set = this.bySecret.get(k);
    if (!set) this.bySecret.set(k, (set = new Set()));
    set.add(key);
  }

  /** Drop a link. */
  remove(key: string): void {
    const s = secretOfId(parseLinkKey(key).id);
    const k = `${s.accessor}\0${s.secret}`;
    const set = this.bySecret.get(k);
    set?.delete(key);
    if (set && set.size === 0) this.bySecret.delete(k);
  }

  /** Link keys of a secret. */
  linksOf(accessor: string, secret: string): string[] {
    return [...(this.bySecret.get(`${accessor}\0${secret}`) ?? [])];
  }

  /** Every secret with at least one link: [accessor, secret, link keys]. */
  *secrets(): Iterable<[string, string, string[]]> {
    for (const [k, set] of this.bySecret) {
      const i = k.indexOf('\0');
      yield [k.slice(0, i), k.slice(i + 1), [...set]];
    }
  }
}

/** Accessor and secret name encoded in a link id. */
export function secretOfId(id: string): { accessor: string; secret: string } {
  const s = decodeURIComponent(id);
  const i = s.indexOf('/');
  return { accessor: s.slice(0, i), secret: s.slice(i + 1) };
}
