/** `keyhold transit keys byok-export DESTINATION SOURCE [VERSION]`: a key wrapped for another RSA key. */
import { flag, optArg, type CommandSpec } from '../../../command.js';
import { MOUNT, mountOf } from '../io.js';
import { emit, enc } from './output.js';

export const byokExport: CommandSpec = {
  words: ['transit', 'keys', 'byok-export'],
  summary:
    "Export a key wrapped for another RSA key (for example another service's wrapping key imported as a public key)",
  args: [
    { name: 'destination', help: 'RSA key to wrap for' },
    { name: 'source', help: 'key to export (must be exportable)' },
    optArg('version', 'a version number or "latest" (default: all)'),
  ],
  flags: [
    MOUNT,
    flag('--hash <name>', 'OAEP hash: SHA1, SHA224, SHA256, SHA384, SHA512', { default: 'SHA256' }),
    flag('--output <file>', 'write the JSON result to this file (mode 0600) instead of stdout'),
  ],
  async run(inv) {
    const { destination, source, version } = inv.args as { destination: string; source: string; version?: string };
    const o = inv.opts as { hash: string; output?: string };
    const res = await inv.client.request(
      'GET',
      `${mountOf(inv)}/byok-export/${enc(destination)}/${enc(source)}${version ? '/' + enc(version) : ''}?hash=${enc(o.hash)}`,
    );
    const data = res.body?.data ?? null;
    if (o.output) emit(inv, JSON.stringify(data, null, 2) + '\n', o.output, 'Wrapped export');
    else await inv.print(data);
  },
};
