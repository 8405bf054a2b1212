/** `keyhold help [TOPIC | COMMAND WORDS]`: topics as well as commands (`keyhold help exit-codes`, `keyhold help transit encrypt`). */
import type { Command } from 'commander';
import { optArg, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { TOPICS, renderTopic } from '../../help-topics.js';

const names = TOPICS.map((t) => t.name).join(', ');

export const help: CommandSpec = {
  words: ['help'],
  summary: `Help on a command, or on a topic: ${names}`,
  args: [optArg('topic', `a topic (${names}) or command words`, { variadic: true })],
  flags: [{ flags: '--list', help: 'list the topics', hidden: true }],
  run(inv) {
    const words = inv.args.topic as string[];
    const root = inv.root;
    if (inv.opts.list) {
      inv.io.stdout.write(TOPICS.map((t) => `${t.name.padEnd(14)}${t.title}`).join('\n') + '\n');
      return;
    }
    if (!words.length) {
      root.outputHelp();
      inv.io.stdout.write(`\nTopics: ${names} (keyhold help TOPIC)\n`);
      return;
    }
    const topic = TOPICS.find((t) => t.name === words.join(' ') || t.name === words.join('-'));
    if (topic) {
      inv.io.stdout.write(renderTopic(topic));
      return;
    }
    let target: Command = root;
    for (const w of words) {
      const next = target.commands.find((c) => c.name() === w || c.aliases().includes(w));
      if (!next) throw new LocalError(`no help topic or command "${words.join(' ')}"; topics: ${names}`);
      target = next;
    }
    target.outputHelp();
  },
};
