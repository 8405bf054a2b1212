/** Bash completion script, rendered from the completion model (no bash-completion package needed). */
import { sq, type CompOption, type CompSpec, type Values } from './completion-spec.js';

function flagsOf(options: CompOption[]): string[] {
  return options.flatMap((o) => [o.short, o.long].filter((x): x is string => Boolean(x)));
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
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

/** The bash script for `keyhold completion bash` and completions/keyhold.bash. */
export function bashCompletion(spec: CompSpec): string {
  const gFlags = flagsOf(spec.globals);
  const gValue = spec.globals.filter((o) => o.takesValue);
  const nodeCases: string[] = [];
  const valueCases: string[] = [];
  for (const n of spec.nodes) {
    const subs = n.subs.map((s) => s.name).join(' ');
    const opts = n.options.length ? unique([...flagsOf(n.options), ...gFlags]).join(' ') : '';
    const vopts = n.options.some((o) => o.takesValue)
      ? unique([...flagsOf(n.options.filter((o) => o.takesValue)), ...flagsOf(gValue)]).join(' ')
      : '';
    const sets = [
      subs && `_kh_subs=${sq(subs)}`,
      opts && `_kh_opts=${sq(opts)}`,
      vopts && `_kh_vopts=${sq(vopts)}`,
    ].filter(Boolean);
    if (sets.length) nodeCases.push(`    ${sq(n.path)}) ${sets.join('; ')} ;;`);
    for (const o of n.options) {
      const code = o.takesValue ? valueCode(o.values) : undefined;
      if (!code) continue;
      for (const flag of [o.short, o.long].filter(Boolean))
        valueCases.push(`    ${sq(`${n.path}|${flag}`)}) echo ${code} ;;`);
    }
    n.args.forEach((a, i) => {
      const code = valueCode(a.values) ?? "'n'";
      valueCases.push(`    ${sq(`${n.path}|${i + 1}`)}) echo ${code} ;;`);
      if (a.variadic) valueCases.push(`    ${sq(`${n.path}|+`)}) echo ${code} ;;`);
    });
  }
  for (const o of gValue) {
    const code = valueCode(o.values);
    if (!code) continue;
    for (const flag of [o.short, o.long].filter(Boolean)) valueCases.push(`    *${sq(`|${flag}`)}) echo ${code} ;;`);
  }
  return `# bash completion for keyhold                                  -*- shell-script -*-
# Generated from the command tree by \`npm run docs\` (src/docs/completion-bash.ts); do not edit.
# Install:  keyhold completion bash > ~/.local/share/bash-completion/completions/keyhold
#     or:   source <(keyhold completion bash)
# Key names, KV paths, mounts and destination names come from the daemon (\`keyhold __complete\`).

# Sets _kh_subs, _kh_opts and _kh_vopts (flags taking a value) for the command path "$1".
_keyhold_node() {
  _kh_subs=''
  _kh_opts=${sq(gFlags.join(' '))}
  _kh_vopts=${sq(flagsOf(gValue).join(' '))}
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

_keyhold_complete_values() {
  local IFS=$' \\t\\n'
  case "$1" in
    w:*) COMPREPLY=($(compgen -W "\${1#w:}" -- "$cur")) ;;
    d:*)
      local out
      out=$("\${COMP_WORDS[0]}" __complete "\${1#d:}" -- "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null)
      IFS=$'\\n'
      COMPREPLY=($(compgen -W "$out" -- "$cur"))
      if [[ \${#COMPREPLY[@]} -eq 1 && \${COMPREPLY[0]} == */ ]]; then compopt -o nospace 2>/dev/null; fi
      ;;
    f)
      COMPREPLY=($(compgen -f -- "$cur"))
      compopt -o filenames 2>/dev/null
      ;;
  esac
  return 0
}

_keyhold() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path='' w i p=0 expect=''
  local _kh_subs _kh_opts _kh_vopts
  COMPREPLY=()
  _keyhold_node ''
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if [[ -n $expect ]]; then
      [[ $w == = ]] && continue
      expect=''
      continue
    fi
    case "$w" in
      --*=*) ;;
      -*) [[ " $_kh_vopts " == *" $w "* ]] && expect="$w" ;;
      *)
        if [[ $p -eq 0 && " $_kh_subs " == *" $w "* ]]; then
          path="\${path:+$path }$w"
          _keyhold_node "$path"
        else
          p=$((p + 1))
        fi
        ;;
    esac
  done
  [[ $cur == = ]] && cur=''
  if [[ -n $expect ]]; then
    _keyhold_complete_values "$(_keyhold_values "$path" "$expect")"
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$_kh_opts" -- "$cur"))
    return 0
  fi
  if [[ $p -eq 0 && -n $_kh_subs ]]; then
    COMPREPLY=($(compgen -W "$_kh_subs" -- "$cur"))
    return 0
  fi
  local v
  v=$(_keyhold_values "$path" $((p + 1)))
  [[ -z $v ]] && v=$(_keyhold_values "$path" +)
  _keyhold_complete_values "$v"
}

complete -F _keyhold keyhold
`;
}
