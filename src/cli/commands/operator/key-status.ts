/** `keyhold operator rotate` and `keyhold operator key-status`: barrier key terms (issue 27; vault's operator rotate / key-status). */
import type { CommandSpec, Invocation } from '../../command.js';
import { machineReadable } from './shares.js';

interface KeyStatus {
  term: number;
  install_time: string;
  encryptions?: number;
}

/** The vault CLI's table of a key status. */
function keyStatusView(s: KeyStatus): Record<string, unknown> {
  return { 'Key Term': s.term, 'Install Time': s.install_time, 'Encryption Count': s.encryptions ?? 0 };
}

async function printStatus(inv: Invocation, s: KeyStatus): Promise<void> {
  await inv.print(machineReadable(inv) ? s : keyStatusView(s));
}

export const rotate: CommandSpec = {
  words: ['operator', 'rotate'],
  summary:
    'Rotate the barrier key (sudo): new records are sealed under a new key term; every older term still decrypts',
  examples: ['keyhold operator rotate'],
  async run(inv) {
    await inv.client.request('POST', 'sys/rotate', {});
    const st = (await inv.client.request('GET', 'sys/key-status')).body as { data: KeyStatus };
    if (!machineReadable(inv)) inv.success('Success! Rotated key');
    await printStatus(inv, st.data);
  },
};

export const keyStatus: CommandSpec = {
  words: ['operator', 'key-status'],
  summary: 'Show the barrier key term in use: its number, install time and encryption count (sudo)',
  examples: ['keyhold operator key-status', 'keyhold operator key-status --field term'],
  async run(inv) {
    const st = (await inv.client.request('GET', 'sys/key-status')).body as { data: KeyStatus };
    await printStatus(inv, st.data);
  },
};
