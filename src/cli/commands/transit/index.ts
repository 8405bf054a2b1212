/** The transit commands, in the order of `keyhold transit --help`. */
import { group, type Entry } from '../../command.js';
import { routeCommands } from '../../route-commands.js';
import { keyRoutes } from '../../../engines/transit/routes/key-routes.js';
import { jwtRoutes } from '../../../engines/transit/routes/jwt-routes.js';
import { read } from './keys/read.js';
import { del } from './keys/delete.js';
import { exportKey } from './keys/export.js';
import { backup } from './keys/backup.js';
import { restore } from './keys/restore.js';
import { wrappingKey } from './keys/wrapping-key.js';
import { byokExport } from './keys/byok-export.js';
import { importKey, importVersion } from './import.js';
import { encrypt } from './encrypt.js';
import { decrypt } from './decrypt.js';
import { rewrap } from './rewrap.js';
import { datakey } from './datakey.js';
import { random } from './random.js';
import { hash } from './hash.js';
import { hmac } from './hmac.js';
import { sign } from './sign.js';
import { verify } from './verify.js';
import { jwtVerify } from './jwt/verify.js';

/** Commands written here; the rest of the routes' cli hints are generated (route-commands.ts). */
const WRITTEN = new Set(
  [read, del, exportKey, backup, restore, wrappingKey, byokExport, importKey, importVersion, jwtVerify].map((c) =>
    c.words.join(' '),
  ),
);

export const transitCommands: Entry[] = [
  group('transit', 'Transit engine: keys and cryptographic operations'),
  group('transit keys', 'Transit keys: create, read, rotate, configure, export, back up, import'),
  read,
  del,
  exportKey,
  backup,
  restore,
  wrappingKey,
  byokExport,
  ...routeCommands(keyRoutes, {
    defaultMount: 'transit',
    skip: (r) => WRITTEN.has(r.cli?.command ?? ''),
    confirm: {
      'transit keys trim': (a) => `Trim old versions of transit key "${a[0]}"? Removed versions are gone for good.`,
    },
  }),
  importKey,
  importVersion,
  encrypt,
  decrypt,
  rewrap,
  datakey,
  random,
  hash,
  hmac,
  sign,
  verify,
  group('transit jwt', 'JWTs signed with transit keys (JWKS at transit/jwks/NAME)'),
  ...routeCommands(jwtRoutes, { defaultMount: 'transit', skip: (r) => WRITTEN.has(r.cli?.command ?? '') }),
  jwtVerify,
];
