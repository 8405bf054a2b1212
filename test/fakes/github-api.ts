/**
 * A strict fake of the GitHub REST endpoints the github auth method calls, answering as GitHub
 * documents them ("Get the authenticated user", "List organizations for the authenticated user",
 * "List teams for the authenticated user", "Get an organization"): the token must come as
 * `Authorization: Bearer <t>` (or `token <t>`) and be known (401 "Bad credentials" otherwise), a
 * User-Agent is required (403 as GitHub), organization and team lists need the read:org scope,
 * lists are paginated with `per_page` (default 30, at most 100) and `page`, with a `Link` header
 * naming the next and last pages.
 *
 * `HvacMockGithub` answers as hvac's own tests/utils/mock_github_request_handler.py does (its
 * behaviour, re-stated here: 200 on every GET, exact paths with `?per_page=100`, an empty body
 * for an unknown token's organizations), so the login works against both.
 */
import { randomBytes } from 'node:crypto';
import { FakeProvider, type FakeReply, type FakeRequest } from './fake-server.js';

const gh = (status: number, message: string): FakeReply => ({
  status,
  json: { message, documentation_url: 'https://docs.github.com/rest' },
});

/** An organization of the fake. */
export interface FakeOrg {
  login: string;
  id: number;
}
/** A team of the fake. */
export interface FakeTeam {
  name: string;
  slug: string;
  org: FakeOrg;
}
/** A user with its token. */
export interface FakeUser {
  login: string;
  id: number;
  token: string;
  scopes: string[];
  orgs: FakeOrg[];
  teams: FakeTeam[];
}

/** The strict GitHub API fake. */
export class GithubApiFake extends FakeProvider {
  readonly users: FakeUser[] = [];
  readonly orgs: FakeOrg[] = [];
  private nextId = 1000;

  /** Add an organization. */
  org(login: string): FakeOrg {
    const o = { login, id: this.nextId++ };
    this.orgs.push(o);
    return o;
  }

  /** Add a user with a fresh token. */
  user(
    login: string,
    opts: { orgs?: FakeOrg[]; teams?: Array<{ name: string; slug?: string; org: FakeOrg }>; scopes?: string[] } = {},
  ): FakeUser {
    const u: FakeUser = {
      login,
      id: this.nextId++,
      token: `ghp_${randomBytes(18).toString('base64url')}`,
      scopes: opts.scopes ?? ['read:org'],
      orgs: opts.orgs ?? [],
      teams: (opts.teams ?? []).map((t) => ({
        name: t.name,
        slug: t.slug ?? t.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
        org: t.org,
      })),
    };
    this.users.push(u);
    return u;
  }

  private page<T>(r: FakeRequest, items: T[]): FakeReply {
    const perRaw = r.url.searchParams.get('per_page');
    const pageRaw = r.url.searchParams.get('page');
    const per = perRaw === null ? 30 : Math.min(100, Math.max(1, Number(perRaw) || 30));
    const page = pageRaw === null ? 1 : Math.max(1, Number(pageRaw) || 1);
    const last = Math.max(1, Math.ceil(items.length / per));
    const links: string[] = [];
    const link = (p: number, rel: string) => {
      const u = new URL(r.url.pathname, this.url);
      u.searchParams.set('page', String(p));
      u.searchParams.set('per_page', String(per));
      links.push(`<${u}>; rel="${rel}"`);
    };
    if (page < last) {
      link(page + 1, 'next');
      link(last, 'last');
    }
    if (page > 1) {
      link(1, 'first');
      link(page - 1, 'prev');
    }
    return {
      status: 200,
      json: items.slice((page - 1) * per, page * per),
      headers: links.length ? { Link: links.join(', ') } : {},
    };
  }

  protected handle(r: FakeRequest): FakeReply {
    if (r.method !== 'GET') return gh(404, 'Not Found');
    if (!r.headers['user-agent'])
      return gh(
        403,
        'Request forbidden by administrative rules. Please make sure your request has a User-Agent header',
      );
    const auth = String(r.headers.authorization ?? '');
    const m = /^(?:Bearer|token) (\S+)$/.exec(auth);
    const user = m ? this.users.find((u) => u.token === m[1]) : undefined;
    if (!user) return gh(401, 'Bad credentials');
    const path = r.url.pathname;
    if (path === '/user')
      return {
        status: 200,
        json: { login: user.login, id: user.id, node_id: `U_${user.id}`, type: 'User', site_admin: false },
      };
    if (path === '/user/orgs' || path === '/user/teams') {
      if (!user.scopes.includes('read:org')) return gh(403, 'Resource not accessible by personal access token');
      if (path === '/user/orgs')
        return this.page(
          r,
          user.orgs.map((o) => ({
            login: o.login,
            id: o.id,
            node_id: `O_${o.id}`,
            url: `${this.url}/orgs/${o.login}`,
          })),
        );
      return this.page(
        r,
        user.teams.map((t, i) => ({
          id: 5000 + i,
          name: t.name,
          slug: t.slug,
          privacy: 'closed',
          organization: { login: t.org.login, id: t.org.id },
        })),
      );
    }
    const org = /^\/orgs\/([^/]+)$/.exec(path);
    if (org) {
      const o = this.orgs.find((x) => x.login.toLowerCase() === decodeURIComponent(org[1]!).toLowerCase());
      return o ? { status: 200, json: { login: o.login, id: o.id, node_id: `O_${o.id}` } } : gh(404, 'Not Found');
    }
    return gh(404, 'Not Found');
  }
}

/** Behaves as hvac's mock GitHub server (see the file comment). */
export class HvacMockGithub extends FakeProvider {
  protected handle(r: FakeRequest): FakeReply {
    const path = `${r.url.pathname}${r.url.search}`;
    const valid = r.headers.authorization === 'Bearer valid-token';
    if (path === '/user') return { status: 200, json: { login: 'hvac-dude', id: 1 } };
    if (path === '/user/orgs?per_page=100')
      return valid ? { status: 200, json: [{ login: 'hvac', id: 1 }] } : { status: 200, text: '' };
    if (path === '/user/teams?per_page=100')
      return { status: 200, json: valid ? [{ name: 'hvac-team', slug: 'hvac-team', organization: { id: 1 } }] : [] };
    return { status: 200, text: '' };
  }
}
