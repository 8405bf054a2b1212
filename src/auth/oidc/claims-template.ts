/**
 * Claims templates of identity token roles (Vault's identity token templates): a JSON object whose
 * values may be `{{identity.entity....}}` or `{{time.now...}}` placeholders, each replaced by the JSON
 * encoding of its value (a string, a map or a list), then parsed. The claims Vault sets itself may not
 * be templated.
 */
import { invalid } from '../../framework/errors.js';
import { parseDuration } from '../../framework/fields.js';

/** Claims keyhold sets on every identity token (a template may not set them). */
export const RESERVED_CLAIMS = ['iat', 'aud', 'exp', 'iss', 'sub', 'namespace', 'nbf', 'jti'];

/** What a template can see of the entity the token is issued to. */
export interface TemplateIdentity {
  id: string;
  name: string;
  metadata: Record<string, string>;
  groupIds: string[];
  groupNames: string[];
  aliases: Array<{ id: string; name: string; mountAccessor: string; metadata: Record<string, string> }>;
}

/** The template text: as given, or base64 of it (Vault accepts both). */
export function templateText(raw: string): string {
  const t = raw.trim();
  if (t === '' || t.startsWith('{')) return t;
  const decoded = Buffer.from(t, 'base64').toString('utf8').trim();
  if (
    decoded.startsWith('{') &&
    Buffer.from(decoded, 'utf8').toString('base64').replace(/=+$/, '') === t.replace(/=+$/, '')
  )
    return decoded;
  return t;
}

/** The value a placeholder names (undefined: not a known placeholder). */
function valueOf(path: string, who: TemplateIdentity, nowSec: number): unknown {
  if (path === 'time.now') return nowSec;
  const time = /^time\.now\.(plus|minus)\.(.+)$/.exec(path);
  if (time) {
    const d = parseDuration('template', time[2]!);
    return time[1] === 'plus' ? nowSec + d : nowSec - d;
  }
  if (!path.startsWith('identity.entity.')) return undefined;
  const rest = path.slice('identity.entity.'.length);
  if (rest === 'id') return who.id;
  if (rest === 'name') return who.name;
  if (rest === 'groups.ids') return who.groupIds;
  if (rest === 'groups.names') return who.groupNames;
  if (rest === 'metadata') return who.metadata;
  if (rest.startsWith('metadata.')) return who.metadata[rest.slice('metadata.'.length)] ?? '';
  const alias = /^aliases\.([^.]+)\.(id|name|metadata)(?:\.(.+))?$/.exec(rest);
  if (alias) {
    const a = who.aliases.find((x) => x.mountAccessor === alias[1]);
    if (alias[2] === 'metadata') return alias[3] !== undefined ? (a?.metadata[alias[3]] ?? '') : (a?.metadata ?? {});
    if (alias[3] !== undefined) return undefined;
    return a ? a[alias[2] as 'id' | 'name'] : '';
  }
  return undefined;
}

/** Render `template` for `who`; 400 naming the problem when it is not a JSON object or uses a reserved claim. */
export function renderClaims(template: string, who: TemplateIdentity, nowSec: number): Record<string, unknown> {
  const text = templateText(template);
  if (text === '') return {};
  const filled = text.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (_m, path: string) => {
    const v = valueOf(path, who, nowSec);
    if (v === undefined) throw invalid('template', `unknown placeholder "{{${path}}}"`);
    return JSON.stringify(v);
  });
  let claims: unknown;
  try {
    claims = JSON.parse(filled);
  } catch (e) {
    throw invalid('template', `error parsing template JSON: ${(e as Error).message}`);
  }
  if (!claims || typeof claims !== 'object' || Array.isArray(claims))
    throw invalid('template', 'the template must be a JSON object');
  for (const k of Object.keys(claims))
    if (RESERVED_CLAIMS.includes(k)) throw invalid('template', `top level key "${k}" is reserved`);
  return claims as Record<string, unknown>;
}

/** Check a template when a role is written (rendered against an empty identity). */
export function checkTemplate(template: string): void {
  renderClaims(template, { id: '', name: '', metadata: {}, groupIds: [], groupNames: [], aliases: [] }, 0);
}
