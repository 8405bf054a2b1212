/** `keyhold sync dest create TYPE NAME`: create (or update) a destination. */
import { optArg, type CommandSpec } from '../../../command.js';
import { ALL_TYPE_IDS } from '../../../../sync/type-aliases.js';
import { destinationBody, destinationFlags } from '../destination-flags.js';
import { destPath, printDestination, typeArg, typeOfArg } from '../views.js';

/** The arguments of create and update after TYPE and NAME. */
export const PAIRS = optArg('pairs', 'more fields as key=value (sensitive ones as key=@file or key=-)', {
  variadic: true,
});

export const create: CommandSpec = {
  words: ['sync', 'dest', 'create'],
  summary: 'Create (or update) a destination; credentials only from @file or - (stdin)',
  args: [
    { name: 'type', help: `destination type: ${ALL_TYPE_IDS.join(', ')}` },
    { name: 'name', help: 'destination name' },
    PAIRS,
  ],
  flags: destinationFlags(),
  stdin: 'a sensitive field given as -',
  examples: [
    'keyhold sync dest create provider-b-kv prod --key-vault-uri https://v.vault.azure.net --client-id ID --tenant-id TENANT --client-secret @secret.txt',
    'printf %s "$TOKEN" | keyhold sync dest create repohost gh --repository-owner acme --repository-name app --access-token -',
    'keyhold sync dest create provider-c-sm gcp --credentials @sa.json --granularity secret-key',
  ],
  async run(inv) {
    const t = typeArg(inv.args.type);
    const body = await destinationBody(inv, typeOfArg(t), inv.args.pairs);
    const r = await inv.client.write(destPath(t, inv.args.name), body);
    for (const w of (r.body?.warnings as string[] | null) ?? []) inv.io.stderr.write(`WARNING: ${w}\n`);
    await printDestination(inv, (r.body?.data ?? {}) as Record<string, unknown>);
  },
};
