/** The operator commands, in the order of `keyhold operator --help`. */
import { group, type Entry } from '../../command.js';
import { init } from './init.js';
import { unseal } from './unseal.js';
import { rekey } from './rekey.js';
import { stepDown } from './step-down.js';
import { migrate } from './migrate.js';
import { seal } from './seal.js';
import { keyStatus, rotate } from './key-status.js';
import { generateRoot } from './generate-root.js';
import { snapshotGroup, snapshotInspect, snapshotRestore, snapshotSave } from './snapshot.js';

export const operatorCommands: Entry[] = [
  group('operator', 'Initialise, unseal, rekey and seal the daemon; rotate its key, regenerate root, take snapshots'),
  init,
  unseal,
  rekey,
  stepDown,
  migrate,
  seal,
  // Issue 27: barrier key rotation, break-glass root, snapshots.
  rotate,
  keyStatus,
  generateRoot,
  snapshotGroup,
  snapshotSave,
  snapshotRestore,
  snapshotInspect,
];
