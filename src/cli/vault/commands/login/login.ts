/**
 * `vault login`: keyhold's login, plus the vault CLI's `-token-only` (print only the token, store
 * nothing: `export VAULT_TOKEN=$(vault login -token-only -method=approle ...)`).
 */
import { flag, type CommandSpec } from '../../../command.js';
import { login as keyholdLogin } from '../../../commands/login/login.js';
import { withOpts } from '../../with-opts.js';

export const login: CommandSpec = {
  ...keyholdLogin,
  flags: [...(keyholdLogin.flags ?? []), flag('--token-only', 'print only the token, and do not store it')],
  examples: [
    'vault login "$TOKEN"',
    'vault login -method=approle role_id="$ROLE_ID" secret_id="$SECRET_ID"',
    'export VAULT_TOKEN=$(vault login -token-only -method=userpass username=ci password=-)',
  ],
  run(inv) {
    if (!inv.opts.tokenOnly) return keyholdLogin.run(inv);
    inv.globals.field = 'token';
    return keyholdLogin.run(withOpts(inv, { ...inv.opts, store: false }));
  },
};
