/** Zsh completion function (`#compdef keyhold`), rendered from the completion model. */
import { sq, type CompOption, type CompSpec, type Values } from './completion-spec.js';

function flagsOf(options: CompOption[]): string[] {
  return options.flatMap((o) => [o.short, o.long].filter((x): x is string => Boolean(x)));
}

function described(options: CompOption[]): string[] {
  return options.flatMap((o) =>
    [o.short, o.long].filter((x): x is string => Boolean(x)).map((f) => `${f}:${o.description}`),
  );
}

/** Keep the first "flag:description" entry of each flag (a command's own option hides a global one). */
function uniqueByFlag(entries: string[]): string[] {
  const seen = new Set<string>();
  return entries.filter((e) => {
    const flag = e.slice(0, e.indexOf(':'));
    if (seen.has(flag)) return false;
    seen.add(flag);
    return true;
  });
}

function valueCode(v: Values): string | undefined {
  switch (v.kind) {
    case 'words':
      return sq('w:' + v.words.join(' '));
    case 'daemon':
      return sq('d:' + v.source);
    case 'files':
      return "'f'";
    case 'none':
      return undefined;
  }
}

function arr(items: string[]): string {
  return '(' + items.map(sq).join(' ') + ')';
}

/** The zsh script for `keyhold completion zsh` and completions/_keyhold. */
export function zshCompletion(spec: CompSpec): string {
  const gValue = spec.globals.filter((o) => o.takesValue);
  const nodeCases: string[] = [];
  const valueCases: string[] = [];
  for (const n of spec.nodes) {
    const sets: string[] = [];
    if (n.subs.length) sets.push(`kh_subs=${arr(n.subs.map((s) => `${s.name}:${s.description}`))}`);
    if (n.options.length)
      sets.push(`kh_opts=${arr(uniqueByFlag([...described(n.options), ...described(spec.globals)]))}`);
    const vopts = flagsOf(n.options.filter((o) => o.takesValue));
    if (vopts.length) sets.push(`kh_vopts=${arr([...new Set([...vopts, ...flagsOf(gValue)])])}`);
    if (sets.length) nodeCases.push(`    ${sq(n.path)}) ${sets.join('; ')} ;;`);
    for (const o of n.options) {
      const code = o.takesValue ? valueCode(o.values) : undefined;
      if (!code) continue;
      for (const flag of [o.short, o.long].filter(Boolean))
        valueCases.push(`    ${sq(`${n.path}|${flag}`)}) print -r -- ${code} ;;`);
    }
    n.args.forEach((a, i) => {
      const code = valueCode(a.values) ?? "'n'";
      valueCases.push(`    ${sq(`${n.path}|${i + 1}`)}) print -r -- ${code} ;;`);
      if (a.variadic) valueCases.push(`    ${sq(`${n.path}|+`)}) print -r -- ${code} ;;`);
    });
  }
  for (const o of gValue) {
    const code = valueCode(o.values);
    if (!code) continue;
    for (const flag of [o.short, o.long].filter(Boolean))
      valueCases.push(`    *${sq(`|${flag}`)}) print -r -- ${code} ;;`);
  }
  return `#compdef keyhold
# zsh completion for keyhold. Generated from the command tree by \`npm run docs\`
# (src/docs/completion-zsh.ts); do not edit.
# Install:  keyhold completion zsh > "\${fpath[1]}/_keyhold"   (then start a new shell)
#     or:   source <(keyhold completion zsh)                  (after compinit)
# Key names, KV paths, mounts and destination names come from the daemon (\`keyhold __complete\`).

# Sets kh_subs and kh_opts ("name:description") and kh_vopts (flags taking a value) for path "$1".
_keyhold_node() {
  kh_subs=()
  kh_opts=${arr(described(spec.globals))}
  kh_vopts=${arr(flagsOf(gValue))}
  case "$1" in
${nodeCases.join('\n')}
  esac
}

# How the value of option "$2" (or positional argument number "$2", "+" for the rest) of command
# path "$1" completes: "w:WORDS", "d:SOURCE" (ask the daemon), "f" (files) or "n" (nothing).
_keyhold_values() {
  case "$1|$2" in
${valueCases.join('\n')}
  esac
}

# Offer "name:description" entries with their descriptions.
_keyhold_described() {
  local -a kh_names kh_descs
  local e
  for e in "$@"; do
    kh_names+=("\${e%%:*}")
    kh_descs+=("\${e%%:*}  -- \${e#*:}")
  done
  compadd -l -d kh_descs -- "\${kh_names[@]}"
}

_keyhold_complete_values() {
  local -a kh_found kh_dirs kh_leaves
  case "$1" in
    w:*) compadd -- \${=1#w:} ;;
    d:*)
      kh_found=(\${(f)"$(\${words[1]} __complete "\${1#d:}" -- "\${(@)words[2,CURRENT]}" 2>/dev/null)"})
      kh_dirs=(\${(M)kh_found:#*/})
      kh_leaves=(\${kh_found:#*/})
      (( \${#kh_dirs} )) && compadd -S '' -- "\${kh_dirs[@]}"
      (( \${#kh_leaves} )) && compadd -- "\${kh_leaves[@]}"
      ;;
    f) _files ;;
  esac
  return 0
}

_keyhold() {
  local -a kh_subs kh_opts kh_vopts
  local kh_path='' kh_w kh_expect='' kh_v
  local -i kh_i kh_p=0
  _keyhold_node ''
  for (( kh_i = 2; kh_i < CURRENT; kh_i++ )); do
    kh_w="\${words[kh_i]}"
    if [[ -n $kh_expect ]]; then
      kh_expect=''
      continue
    fi
    case "$kh_w" in
      --*=*) ;;
      -*) (( \${kh_vopts[(Ie)$kh_w]} )) && kh_expect="$kh_w" ;;
      *)
        if (( kh_p == 0 )) && (( \${kh_subs[(I)$kh_w:*]} )); then
          kh_path="\${kh_path:+$kh_path }$kh_w"
          _keyhold_node "$kh_path"
        else
          kh_p+=1
        fi
        ;;
    esac
  done
  local kh_cur="\${words[CURRENT]}"
  if [[ -n $kh_expect ]]; then
    _keyhold_complete_values "$(_keyhold_values "$kh_path" "$kh_expect")"
    return 0
  fi
  if [[ $kh_cur == --*=* ]]; then
    compset -P '*='
    _keyhold_complete_values "$(_keyhold_values "$kh_path" "\${kh_cur%%=*}")"
    return 0
  fi
  if [[ $kh_cur == -* ]]; then
    _keyhold_described "\${kh_opts[@]}"
    return 0
  fi
  if (( kh_p == 0 && \${#kh_subs} )); then
    _keyhold_described "\${kh_subs[@]}"
    return 0
  fi
  kh_v="$(_keyhold_values "$kh_path" $(( kh_p + 1 )))"
  [[ -z $kh_v ]] && kh_v="$(_keyhold_values "$kh_path" +)"
  _keyhold_complete_values "$kh_v"
}

if [[ $funcstack[1] == _keyhold ]]; then
  _keyhold "$@"
else
  compdef _keyhold keyhold
fi
`;
}
