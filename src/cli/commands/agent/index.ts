/** The agent commands. */
import type { Entry } from '../../command.js';
import { agent } from './agent.js';
import { generateConfig } from './generate-config.js';

export const agentCommands: Entry[] = [agent, generateConfig];
