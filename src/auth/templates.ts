/**
 * Vault's identity templating for ACL policy paths (sdk/helper/identitytpl, ACL mode):
 * `{{identity.entity.id}}`, `.name`, `.metadata.K`, `.aliases.<mount accessor>.id|name|metadata.K|
 * custom_metadata.K`, `{{identity.groups.ids.<id>.name|metadata.K}}`, `{{identity.groups.names.<name>.id|
 * metadata.K}}` and `{{time.now}}` / `{{time.now.plus|minus.<duration>}}`. A directive that cannot be
 * resolved makes the whole path rule not apply, as in Vault; results holding `*` or `+` are refused so a
 * template can never widen a rule into a glob.
 */
import { parseDuration } from '../framework/fields.js';
import type { TokenIdentity } from '../framework/context.js';
import { TemplateError } from '../framework/errors.js';

/** Split on `{{ }}`: throws on unbalanced markers; returns whether the string holds directives. */
export function validateTemplate(s: string): boolean {
  const parts = s.split('{{');
  if (parts[0]!.includes('}}')) throw new TemplateError('unbalanced templating characters');
  for (let i = 1; i < parts.length; i++)
    if (parts[i]!.split('}}').length !== 2) throw new TemplateError('unbalanced templating characters');
  return parts.length > 1;
}

/** Substitute every directive of `s` from `identity` (ACL mode); throws TemplateError when one does not resolve. */
export function populateTemplate(s: string, identity: TokenIdentity | undefined, nowMs: number): string {
  const parts = s.split('{{');
  if (parts[0]!.includes('}}')) throw new TemplateError('unbalanced templating characters');
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i++) {
    const piece = parts[i]!.split('}}');
    if (piece.length !== 2) throw new TemplateError('unbalanced templating characters');
    const v = resolve(piece[0]!.trim(), identity, nowMs);
    if (/[*+]/.test(v)) throw new TemplateError('globs and wildcards are not allowed in template result');
    out += v + piece[1]!;
  }
  return out;
}

function nonEmpty(v: string | undefined): string {
  if (v === undefined || v === '')
    throw new TemplateError('no value could be found for one of the template directives');
  return v;
}

function fromMap(m: Record<string, string> | undefined, key: string): string {
  if (!m || !Object.hasOwn(m, key))
    throw new TemplateError('no value could be found for one of the template directives');
  return m[key]!;
}

function resolve(input: string, identity: TokenIdentity | undefined, nowMs: number): string {
  if (input.startsWith('identity.entity.')) {
    if (!identity) throw new TemplateError('string contains entity template directives but no entity was provided');
    return entity(input.slice('identity.entity.'.length), identity);
  }
  if (input.startsWith('identity.groups.')) {
    if (!identity?.groupIds?.length)
      throw new TemplateError('string contains groups template directives but no groups were provided');
    return groups(input.slice('identity.groups.'.length), identity);
  }
  if (input.startsWith('time.')) return time(input.slice('time.'.length), nowMs);
  throw new TemplateError('no value could be found for one of the template directives');
}

function entity(sel: string, id: TokenIdentity): string {
  if (sel === 'id') return nonEmpty(id.entityId);
  if (sel === 'name') return nonEmpty(id.entityName);
  if (sel.startsWith('metadata.')) return fromMap(id.entityMetadata, sel.slice('metadata.'.length));
  if (sel.startsWith('aliases.')) {
    const rest = sel.slice('aliases.'.length);
    const dot = rest.indexOf('.');
    if (dot === -1) throw new TemplateError('invalid alias selector');
    const accessor = rest.slice(0, dot);
    const field = rest.slice(dot + 1);
    const alias = id.aliases.find((a) => a.mountAccessor === accessor);
    if (!alias) throw new TemplateError('alias not found');
    if (field === 'id') return nonEmpty(alias.id);
    if (field === 'name') return nonEmpty(alias.name);
    if (field.startsWith('metadata.')) return fromMap(alias.metadata, field.slice('metadata.'.length));
    if (field.startsWith('custom_metadata.'))
      return fromMap(alias.customMetadata, field.slice('custom_metadata.'.length));
  }
  // Lists and whole maps (groups.names, metadata) have no ACL rendering in Vault either.
  throw new TemplateError('no value could be found for one of the template directives');
}

function groups(sel: string, id: TokenIdentity): string {
  const m = /^(ids|names)\.([^.]+)\.(.+)$/.exec(sel);
  if (!m) throw new TemplateError('invalid groups selector');
  const ids = id.groupIds ?? [];
  const names = id.groupNames ?? [];
  const idx = m[1] === 'ids' ? ids.indexOf(m[2]!) : names.indexOf(m[2]!);
  if (idx === -1) throw new TemplateError(`entity is not a member of group "${m[2]}"`);
  const field = m[3]!;
  if (field === 'id') return nonEmpty(ids[idx]);
  if (field === 'name') return nonEmpty(names[idx]);
  if (field.startsWith('metadata.')) return fromMap(id.groupMetadata?.[ids[idx]!], field.slice('metadata.'.length));
  throw new TemplateError('no value could be found for one of the template directives');
}

function time(sel: string, nowMs: number): string {
  const ops = sel.split('.');
  if (ops[0] !== 'now') throw new TemplateError(`invalid time selector "${ops[0]}"`);
  let t = Math.floor(nowMs / 1000);
  if (ops.length === 2) throw new TemplateError('missing time operand');
  if (ops.length >= 3) {
    let d: number;
    try {
      d = parseDuration('duration', ops.slice(2).join('.'));
    } catch {
      throw new TemplateError('invalid duration');
    }
    if (ops[1] === 'plus') t += d;
    else if (ops[1] === 'minus') t -= d;
    else throw new TemplateError(`invalid time operator "${ops[1]}"`);
  }
  return String(t);
}
