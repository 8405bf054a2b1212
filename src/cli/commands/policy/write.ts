/** `keyhold policy write NAME FILE|-`: create or replace an ACL policy. */
import { readFileSync } from 'node:fs';
import type { CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

function readFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

export const write: CommandSpec = {
  words: ['policy', 'write'],
  summary: 'Create or replace a policy from a file or stdin (-)',
  args: [{ name: 'name' }, { name: 'file', help: 'policy file, or - for stdin' }],
  stdin: 'the policy with "-"',
  examples: [
    'keyhold policy write transit-user policy.hcl',
    'echo \'path "transit/encrypt/app" { capabilities = ["update"] }\' | keyhold policy write app -',
  ],
  async run(inv) {
    const { name, file } = inv.args as { name: string; file: string };
    const text = file === '-' ? (await inv.io.stdin()).toString('utf8') : readFile(file);
    await inv.client.write(`sys/policies/acl/${encodeURIComponent(name)}`, { policy: text });
    inv.success(`Success! Uploaded policy: ${name}`);
  },
};
