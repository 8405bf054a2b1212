/**
 * `vault audit enable TYPE [k=v...]`: keyhold's command, accepting `log_raw=true` as the vault CLI
 * does: keyhold never writes unhashed secrets to its audit log, so the option is dropped with one
 * warning line saying why raw logging is risky. Any other value of log_raw (false) is simply left out.
 */
import type { CommandSpec } from '../../../command.js';
import { enable as keyholdEnable } from '../../../commands/audit/enable.js';

/** `log_raw=...` given as an option pair. */
const LOG_RAW = /^log_raw=/;

export const enable: CommandSpec = {
  ...keyholdEnable,
  examples: [
    'vault audit enable file file_path=/var/log/vault_audit.log',
    'vault audit enable -path=raw file file_path=/tmp/audit.log log_raw=true',
  ],
  run(inv) {
    const pairs = (inv.args.options as string[] | undefined) ?? [];
    const raw = pairs.filter((p) => LOG_RAW.test(p));
    if (raw.some((p) => /^log_raw=(1|t|true)$/i.test(p))) {
      inv.warn(
        'log_raw=true ignored: a raw audit log would hold every secret and token unencrypted on disk; keyhold always hashes them (HMAC-SHA256)',
      );
    }
    const args = { ...inv.args, options: pairs.filter((p) => !LOG_RAW.test(p)) };
    const out = Object.create(inv) as typeof inv;
    Object.defineProperty(out, 'args', { value: args, enumerable: true });
    return keyholdEnable.run(out);
  },
};
