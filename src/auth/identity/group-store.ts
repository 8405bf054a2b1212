/**
 * Group records in storage, all held in memory once loaded (group-graph.ts indexes them), as Vault's
 * MemDB holds them: groups are few next to entities, and a token's groups must be known on the hot
 * path. Every write tells the owner (token views start over).
 */
import { getJSON, putJSON, type Storage } from '../../storage/backend.js';
import { GroupGraph } from './group-graph.js';
import { keys, type GroupRecord } from './records.js';

/** Groups in storage, loaded whole. */
export class GroupStore {
  private graph = new GroupGraph();
  private loading: Promise<void> | null = null;
  private loaded = false;
  /** Bumped by clear(): a load begun before is not kept. */
  private generation = 0;

  constructor(
    private readonly storage: Storage,
    private readonly onChange: () => void,
  ) {}

  /** Whether the groups are in memory (the hot path computes views only then). */
  get ready(): boolean {
    return this.loaded;
  }

  /** The groups in memory; only meaningful once `ready` (or after `load()`). */
  get now(): GroupGraph {
    return this.graph;
  }

  /** Forget the loaded groups (seal, or another daemon changed storage). */
  clear(): void {
    this.generation++;
    this.graph = new GroupGraph();
    this.loading = null;
    this.loaded = false;
  }

  /** The groups, loaded from storage on first use. */
  async load(): Promise<GroupGraph> {
    while (!this.loaded) {
      if (!this.loading) {
        const gen = this.generation;
        const graph = new GroupGraph();
        const loading = (async () => {
          for (const name of await this.storage.list('group/')) {
            if (name.endsWith('/')) continue;
            const g = await getJSON<GroupRecord>(this.storage, `group/${name}`);
            if (g) graph.put(g);
          }
          if (gen === this.generation) {
            this.graph = graph;
            this.loaded = true;
          }
        })();
        this.loading = loading;
        loading.catch(() => {
          if (this.loading === loading) this.loading = null;
        });
      }
      await this.loading;
    }
    return this.graph;
  }

  /** A group by id. */
  async get(id: string): Promise<GroupRecord | undefined> {
    return (await this.load()).get(id);
  }

  /** A group by name (case-insensitive, as Vault). */
  async byName(name: string): Promise<GroupRecord | undefined> {
    return (await this.load()).byGroupName(name);
  }

  /** The group holding group alias `aliasId`. */
  async byAliasId(aliasId: string): Promise<GroupRecord | undefined> {
    return (await this.load()).byGroupAliasId(aliasId);
  }

  /** The external group whose alias is `name` on `mountAccessor`. */
  async byAlias(mountAccessor: string, name: string): Promise<GroupRecord | undefined> {
    return (await this.load()).byAliasFactors(mountAccessor, name);
  }

  /** Every group, sorted by id. */
  async list(): Promise<GroupRecord[]> {
    return [...(await this.load()).all()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Ids of the groups that are members of `groupId` (their parents include it). */
  async memberGroupIds(groupId: string): Promise<string[]> {
    return (await this.load()).childrenOf(groupId).map((g) => g.id);
  }

  /** Group alias ids, sorted. */
  async aliasIds(): Promise<string[]> {
    const out: string[] = [];
    for (const g of (await this.load()).all()) if (g.alias) out.push(g.alias.id);
    return out.sort();
  }

  /** Persist a group (loaded first, so the graph stays whole). */
  async write(g: GroupRecord): Promise<void> {
    await this.load();
    await putJSON(this.storage, keys.group(g.id), g);
    this.graph.put(g);
    this.onChange();
  }

  /** Delete a group record. */
  async remove(id: string): Promise<void> {
    await this.load();
    await this.storage.delete(keys.group(id));
    this.graph.remove(id);
    this.onChange();
  }
}
