/** The operator commands, in the order of `keyhold operator --help`. */
import { group, type Entry } from '../../command.js';
import { init } from './init.js';
import { unseal } from './unseal.js';
import { rekey } from './rekey.js';
import { stepDown } from './step-down.js';
import { migrate } from './migrate.js';
import { seal } from './seal.js';

export const operatorCommands: Entry[] = [group('operator', 'Initialise, unseal, rekey and seal the daemon'), init, unseal, rekey, stepDown, migrate, seal];
