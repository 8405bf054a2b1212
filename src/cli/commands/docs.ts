/**
 * Documentation commands: `completion`, the hidden `__complete`, `openapi`, `path-help`, `help TOPIC`.
 * Registered last, so it also adds the examples table to every command's `--help`. Generators load
 * lazily: ordinary commands pay nothing for them at start-up.
 */
import { Command, Argument, Option } from 'commander';
import type { CliContext } from '../context.js';
import { Client, LocalError } from '../client.js';
import { applyExamples } from '../examples.js';
import { TOPICS, renderTopic } from '../help-topics.js';

/** How long `__complete` waits for the daemon before answering nothing. */
const COMPLETE_TIMEOUT_MS = 800;

function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

/** Register the docs commands. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('completion')
    .description('Print the shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'shell to complete for').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: 'bash' | 'zsh' | 'fish', _o, cmd: Command) => {
      const { completionScript } = await import('../../docs/generate.js');
      process.stdout.write(completionScript(rootOf(cmd), shell));
    });

  program
    .command('__complete', { hidden: true })
    .description('Completion candidates from the daemon (used by the completion scripts)')
    .argument('<source>')
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .action(async (source: string, words: string[]) => {
      let out: string[] = [];
      try {
        const { candidates, parseWords, withTimeout } = await import('../../docs/complete.js');
        const info = parseWords(words ?? []);
        const client = new Client({ address: info.options['--address'], token: info.options['--token'] });
        out = await withTimeout(candidates(source as never, words ?? [], client), COMPLETE_TIMEOUT_MS, []);
      } catch {
        out = [];
      }
      // Exit once written: a daemon that never answers must not keep the shell waiting.
      process.stdout.write(out.length ? out.join('\n') + '\n' : '', () => process.exit(0));
    });

  program
    .command('openapi')
    .description('Print the OpenAPI 3 document of the mounted routes (sys/internal/specs/openapi)')
    .option('--offline', 'build it from the route tables with the dev mounts (transit/, secret/), without a daemon')
    .option('--generic-mount-paths', 'replace mount paths with {<mount>_mount_path} parameters')
    .action(async (o: { offline?: boolean; genericMountPaths?: boolean }, cmd: Command) => {
      let doc: unknown;
      if (o.offline) {
        const [{ DEV_MOUNTS, mountedRoutes }, { buildOpenApi }, { VERSION }] = await Promise.all([import('../../docs/catalog.js'), import('../../docs/openapi.js'), import('../../version.js')]);
        doc = buildOpenApi(mountedRoutes(DEV_MOUNTS), { version: VERSION, genericMountPaths: o.genericMountPaths });
      } else {
        const res = await ctx.client(cmd).read('sys/internal/specs/openapi', o.genericMountPaths ? { generic_mount_paths: 'true' } : undefined);
        doc = res.body;
      }
      const g = ctx.globals(cmd);
      if (g.field || g.format === 'yaml') await ctx.print(cmd, doc);
      else process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
    });

  program
    .command('path-help')
    .description('Describe the HTTP route serving a path: summary, operations and fields (like vault path-help)')
    .argument('<path>', 'full path, e.g. transit/keys/app')
    .action(async (path: string, _o, cmd: Command) => {
      const { DEV_MOUNTS, mountedRoutes } = await import('../../docs/catalog.js');
      const { findPath, pathHelp, renderPathHelp } = await import('../../docs/path-help.js');
      let live: Array<{ path: string; type: string; description?: string }>;
      try {
        const res = await ctx.client(cmd).read('sys/mounts');
        const data = (res.body?.data ?? {}) as Record<string, { type?: string; description?: string }>;
        live = Object.entries(data).map(([p, m]) => ({ path: p, type: String(m.type ?? ''), description: m.description }));
      } catch (e) {
        // Without a daemon (or permission to list mounts), assume the dev mounts and say so.
        process.stderr.write(`note: could not read sys/mounts (${(e as Error).message}); assuming transit/ and secret/ mounts\n`);
        live = [...DEV_MOUNTS];
      }
      const hit = findPath(mountedRoutes(live), path);
      if (!hit) throw new LocalError(`no route serves "${path}"; run \`keyhold secrets list\` to see the mounts`);
      const help = pathHelp(path, hit.mount, hit.route);
      const g = ctx.globals(cmd);
      if (g.field || (g.format && g.format !== 'table')) await ctx.print(cmd, help);
      else process.stdout.write(renderPathHelp(help));
    });

  // Our own `help`: topics as well as commands (`keyhold help exit-codes`, `keyhold help transit encrypt`).
  program.helpCommand(false);
  program
    .command('help')
    .description(`Help on a command, or on a topic: ${TOPICS.map((t) => t.name).join(', ')}`)
    .addArgument(new Argument('[topic...]', `a topic (${TOPICS.map((t) => t.name).join(', ')}) or command words`))
    .addOption(new Option('--list', 'list the topics').hideHelp())
    .action((words: string[], o: { list?: boolean }, cmd: Command) => {
      const root = rootOf(cmd);
      if (o.list) {
        process.stdout.write(TOPICS.map((t) => `${t.name.padEnd(14)}${t.title}`).join('\n') + '\n');
        return;
      }
      if (!words.length) {
        root.outputHelp();
        process.stdout.write(`\nTopics: ${TOPICS.map((t) => t.name).join(', ')} (keyhold help TOPIC)\n`);
        return;
      }
      const topic = TOPICS.find((t) => t.name === words.join(' ') || t.name === words.join('-'));
      if (topic) {
        process.stdout.write(renderTopic(topic));
        return;
      }
      let target: Command = root;
      for (const w of words) {
        const next = target.commands.find((c) => c.name() === w || c.aliases().includes(w));
        if (!next) throw new LocalError(`no help topic or command "${words.join(' ')}"; topics: ${TOPICS.map((t) => t.name).join(', ')}`);
        target = next;
      }
      target.outputHelp();
    });

  applyExamples(program);
}
