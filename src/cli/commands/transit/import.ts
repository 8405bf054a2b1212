/** `keyhold transit import NAME --file KEY` and `transit import-version NAME --file KEY` (BYOK). */
import type { CommandSpec, FlagSpec } from '../../command.js';
import { fieldFlag, givenOf, routeAt } from '../../route-flags.js';
import { keyIoRoutes } from '../../../engines/transit/routes/key-io-routes.js';
import { MOUNT } from './io.js';
import { byokSend } from './byok.js';

const IMPORT = routeAt(keyIoRoutes, 'keys/:name/import');
const IMPORT_VERSION = routeAt(keyIoRoutes, 'keys/:name/import_version');

/** Flags of both commands. */
const COMMON: FlagSpec[] = [
  {
    flags: '--file <path>',
    help: 'key file: PEM private/public key, PKCS#8 DER, or raw key bytes ("-" = stdin)',
    required: true,
  },
  { flags: '--type <type>', help: "key type (import: default aes256-gcm96; import-version: the key's type)" },
  { flags: '--hash-function <name>', help: 'OAEP hash: SHA1, SHA224, SHA256, SHA384, SHA512', default: 'SHA256' },
  { flags: '--base64', help: 'the file holds base64 text of the raw key' },
  MOUNT,
];

const importFields = [
  fieldFlag(IMPORT, 'allow_rotation', { switch: true }),
  fieldFlag(IMPORT, 'derived', { switch: true }),
  fieldFlag(IMPORT, 'exportable', { switch: true }),
  fieldFlag(IMPORT, 'allow_plaintext_backup', { switch: true }),
  fieldFlag(IMPORT, 'auto_rotate_period', { help: 'auto-rotation period (needs --allow-rotation)' }),
];

export const importKey: CommandSpec = {
  words: ['transit', 'import'],
  summary: 'Import a key you hold (BYOK): fetches the wrapping key and wraps the key locally',
  args: [{ name: 'name', help: 'key name' }],
  flags: [...COMMON, ...importFields],
  stdin: 'the key file with --file -',
  examples: [
    'keyhold transit import payments --file aes.key --type aes256-gcm96',
    'keyhold transit import signer --file signer.pem --type ecdsa-p256',
    'keyhold transit import verifier --file public.pem --type ed25519   # public key only',
  ],
  run: (inv) => byokSend(inv, inv.args.name, 'import', givenOf(importFields, inv.opts)),
};

const versionFields = [
  fieldFlag(IMPORT_VERSION, 'version', { value: 'n', help: 'complete this public-only version with its private key' }),
];

export const importVersion: CommandSpec = {
  words: ['transit', 'import-version'],
  summary: 'Import new material into an imported key (new version, or complete a public-only version)',
  args: [{ name: 'name', help: 'key name' }],
  flags: [...COMMON, ...versionFields],
  stdin: 'the key file with --file -',
  run: (inv) => byokSend(inv, inv.args.name, 'import_version', givenOf(versionFields, inv.opts)),
};
