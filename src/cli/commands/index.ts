/**
 * The command list: every command of `keyhold`, in the order of `keyhold --help`. The parser
 * (commander-adapter.ts) is built from it, and the completions, man pages and reference (src/docs)
 * describe the parser so built. A new command is a file under commands/<noun>/ and a line here.
 */
import type { Entry } from '../command.js';
import { server } from './server/server.js';
import { status } from './status/status.js';
import { version } from './version/version.js';
import { operatorCommands } from './operator/index.js';
import { pathCommands } from './path/index.js';
import { tokenCommands } from './token/index.js';
import { policyCommands } from './policy/index.js';
import { secretsCommands } from './secrets/index.js';
import { login } from './login/login.js';
import { authCommands } from './auth/index.js';
import { transitCommands } from './transit/index.js';
import { kvCommands } from './kv/index.js';
import { syncCommands } from './sync/index.js';
import { auditCommands } from './audit/index.js';
import { managedKeysCommands } from './managed-keys/index.js';
import { run } from './run/run.js';
import { env } from './run/env.js';
import { unwrap } from './unwrap/unwrap.js';
import { docsCommands } from './docs/index.js';
import { serviceCommands } from './service/index.js';
import { quotaCommands } from './quota/index.js';
import { monitor } from './monitor/monitor.js';

export const COMMANDS: readonly Entry[] = [
  server,
  status,
  version,
  ...operatorCommands,
  ...pathCommands,
  ...tokenCommands,
  ...policyCommands,
  ...secretsCommands,
  login,
  ...authCommands,
  ...transitCommands,
  ...kvCommands,
  ...syncCommands,
  ...auditCommands,
  ...managedKeysCommands,
  run,
  env,
  unwrap,
  ...docsCommands,
  ...serviceCommands,
  ...quotaCommands,
  monitor,
];
