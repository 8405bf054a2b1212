/**
 * The few GitHub REST calls the github auth method makes (as Vault's builtin/credential/github
 * does through go-github): the token's user, its organizations and its teams, 100 per page,
 * following GitHub's `Link: <...>; rel="next"` pagination, and an organization by name.
 * The token goes only into the Authorization header; errors never echo it.
 */
import { KeyholdError } from '../../framework/errors.js';

/** GitHub's public API (Vault's default base_url). */
export const DEFAULT_BASE_URL = 'https://api.github.com/';

/** A user as GET /user answers it (the fields read). */
export interface GithubUser {
  login: string;
  id: number;
}

/** An organization as GET /user/orgs and GET /orgs/:org answer it. */
export interface GithubOrg {
  login: string;
  id: number;
}

/** A team as GET /user/teams answers it. */
export interface GithubTeam {
  name: string;
  slug: string;
  organization?: { id?: number; login?: string };
}

const MAX_PAGES = 50;

/** The page number of the `rel="next"` link, or 0 (go-github's Response.NextPage). */
export function nextPage(link: string | null): number {
  if (!link) return 0;
  for (const part of link.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (!m) continue;
    try {
      return Number(new URL(m[1]!, 'http://x/').searchParams.get('page') ?? 0) || 0;
    } catch {
      return 0;
    }
  }
  return 0;
}

/** A client for one token at one base URL. */
export class GithubApi {
  private readonly base: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly timeoutMs = 10_000,
  ) {
    const b = baseUrl === '' || baseUrl === '/' ? DEFAULT_BASE_URL : baseUrl;
    this.base = b.endsWith('/') ? b : `${b}/`;
  }

  /** GET `path` under the base URL: the parsed body (null for an empty one) and the next page. */
  private async get(path: string): Promise<{ status: number; body: unknown; next: number }> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.base), {
        headers: {
          Authorization: `Bearer ${this.token}`,
          Accept: 'application/vnd.github.v3+json',
          'User-Agent': 'keyhold',
        },
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
    } catch (e) {
      throw new KeyholdError(
        'unavailable',
        `GitHub API at ${this.base} unreachable: ${(e as Error).name === 'TimeoutError' ? 'timed out' : ((e as { cause?: { code?: string } }).cause?.code ?? 'connection failed')}`,
        { status: 502 },
      );
    }
    const text = await res.text();
    let body: unknown = null;
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        throw new KeyholdError(
          'unavailable',
          `GitHub API at ${this.base} answered ${path.split('?')[0]} with something that is not JSON`,
          { status: 502 },
        );
      }
    }
    return { status: res.status, body, next: nextPage(res.headers.get('link')) };
  }

  private refuse(status: number): never {
    if (status === 401 || status === 403)
      throw new KeyholdError(
        'invalid',
        'GitHub refused the token (401/403): check that it is a valid personal access token with the read:org scope',
      );
    throw new KeyholdError('unavailable', `GitHub API at ${this.base} answered ${status}`, { status: 502 });
  }

  /** The token's user. */
  async user(): Promise<GithubUser> {
    const r = await this.get('user');
    if (r.status !== 200) this.refuse(r.status);
    const u = r.body as Partial<GithubUser> | null;
    if (!u || typeof u.login !== 'string' || u.login === '')
      throw new KeyholdError('unavailable', 'GitHub API answered /user without a login', { status: 502 });
    return { login: u.login, id: typeof u.id === 'number' ? u.id : 0 };
  }

  /** Every page of a list endpoint. */
  private async all<T>(path: string): Promise<T[]> {
    const out: T[] = [];
    let page = 1;
    for (let n = 0; n < MAX_PAGES; n++) {
      const r = await this.get(page === 1 ? `${path}?per_page=100` : `${path}?page=${page}&per_page=100`);
      if (r.status !== 200) this.refuse(r.status);
      if (Array.isArray(r.body)) out.push(...(r.body as T[]));
      if (!r.next || r.next <= page) break;
      page = r.next;
    }
    return out;
  }

  /** The token's organizations. */
  orgs(): Promise<GithubOrg[]> {
    return this.all<GithubOrg>('user/orgs');
  }

  /** The token's teams (across organizations). */
  teams(): Promise<GithubTeam[]> {
    return this.all<GithubTeam>('user/teams');
  }

  /** An organization's id by name (0 when GitHub does not say). */
  async orgId(name: string): Promise<number> {
    const r = await this.get(`orgs/${encodeURIComponent(name)}`);
    if (r.status !== 200) return 0;
    const o = r.body as Partial<GithubOrg> | null;
    return o && typeof o.id === 'number' ? o.id : 0;
  }
}
