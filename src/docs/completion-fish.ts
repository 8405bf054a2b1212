/** Fish completions (`complete -c keyhold ...`), rendered from the completion model. */
import type { CompOption, CompSpec, Values } from './completion-spec.js';

/** Quote for a single-quoted fish string (`\` and `'` are the only escapes). */
function fq(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function valueFlags(v: Values): string {
  switch (v.kind) {
    case 'words':
      return ` -x -a ${fq(v.words.join(' '))}`;
    case 'daemon':
      return ` -x -a ${fq(`(__keyhold_dyn ${v.source})`)}`;
    case 'files':
      return ' -r -F';
    case 'none':
      return ' -x';
  }
}

function optionLine(o: CompOption, cond: string): string {
  let line = 'complete -c keyhold';
  if (cond) line += ` -n ${fq(cond)}`;
  if (o.short) line += ` -s ${o.short.replace(/^-/, '')}`;
  if (o.long) line += ` -l ${o.long.replace(/^--/, '')}`;
  if (o.takesValue) line += valueFlags(o.values);
  if (o.description) line += ` -d ${fq(o.description)}`;
  return line;
}

/** The fish script for `keyhold completion fish` and completions/keyhold.fish. */
export function fishCompletion(spec: CompSpec): string {
  const paths = spec.nodes.filter((n) => n.path).map((n) => n.path);
  const vopts: string[] = [];
  for (const n of spec.nodes)
    for (const o of n.options.filter((x) => x.takesValue))
      for (const f of [o.short, o.long]) if (f) vopts.push(`${n.path}|${f}`);
  for (const o of spec.globals.filter((x) => x.takesValue))
    for (const f of [o.short, o.long]) if (f) vopts.push(`*|${f}`);
  const lines: string[] = [];
  for (const o of spec.globals) lines.push(optionLine(o, ''));
  for (const n of spec.nodes) {
    const at = `__keyhold_at ${fq(n.path)}`;
    if (n.subs.length) {
      lines.push('');
      lines.push(`# ${n.path ? `keyhold ${n.path}` : 'keyhold'}`);
      for (const s of n.subs)
        lines.push(
          `complete -c keyhold -n ${fq(`__keyhold_arg ${fq(n.path)} 1`)} -a ${fq(s.name)} -d ${fq(s.description)}`,
        );
    }
    for (const o of n.options) lines.push(optionLine(o, at));
    n.args.forEach((a, i) => {
      const cond = `__keyhold_arg ${fq(n.path)} ${i + 1}${a.variadic ? '+' : ''}`;
      const v = a.values;
      if (v.kind === 'words') lines.push(`complete -c keyhold -n ${fq(cond)} -a ${fq(v.words.join(' '))}`);
      else if (v.kind === 'daemon')
        lines.push(`complete -c keyhold -n ${fq(cond)} -a ${fq(`(__keyhold_dyn ${v.source})`)}`);
      else if (v.kind === 'files') lines.push(`complete -c keyhold -n ${fq(cond)} -F`);
    });
  }
  return `# fish completion for keyhold. Generated from the command tree by \`npm run docs\`
# (src/docs/completion-fish.ts); do not edit.
# Install:  keyhold completion fish > ~/.config/fish/completions/keyhold.fish
# Key names, KV paths, mounts and destination names come from the daemon (\`keyhold __complete\`).

set -g __keyhold_paths ${paths.map(fq).join(' ')}
set -g __keyhold_vopts ${vopts.map(fq).join(' ')}

# Prints "p:PATH" (command words) and the number of positional arguments typed so far.
function __keyhold_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path ''
    set -l npos 0
    set -l expect 0
    for t in $tokens
        if test $expect -eq 1
            set expect 0
            continue
        end
        switch $t
            case '--*=*'
            case '-*'
                if contains -- "$path|$t" $__keyhold_vopts; or contains -- "*|$t" $__keyhold_vopts
                    set expect 1
                end
            case '*'
                set -l next (string trim -- "$path $t")
                if test $npos -eq 0; and contains -- $next $__keyhold_paths
                    set path $next
                else
                    set npos (math $npos + 1)
                end
        end
    end
    echo "p:$path"
    echo $npos
end

# True when the command path is $argv[1].
function __keyhold_at
    set -l s (__keyhold_state)
    test "$s[1]" = "p:$argv[1]"
end

# True when completing positional argument $argv[2] ("N+" for N or later) of command path $argv[1].
function __keyhold_arg
    set -l s (__keyhold_state)
    test "$s[1]" = "p:$argv[1]"; or return 1
    set -l n (string replace '+' '' -- $argv[2])
    if string match -q '*+' -- $argv[2]
        test (math $s[2] + 1) -ge $n
    else
        test (math $s[2] + 1) -eq $n
    end
end

# Candidates from the daemon; quiet and quick when none answers.
function __keyhold_dyn
    set -l words (commandline -opc)
    set -l prog $words[1]
    set -e words[1]
    command $prog __complete $argv[1] -- $words (commandline -ct) 2>/dev/null
end

complete -c keyhold -f
${lines.join('\n')}
`;
}
