/**
 * The entry of `keyhold agent -config FILE`: load the configuration, start the agent, route signals
 * (to the exec child when there is one) and resolve with the exit code.
 */
import { forwardSignals } from '../cli/child-process.js';
import { loadAgentConfig } from './config.js';
import { Agent } from './agent.js';
import { AgentLog, levelOf } from './log.js';

export interface RunAgentOptions {
  configs: string[];
  logLevel?: string;
  exitAfterAuth?: boolean;
}

export async function runAgent(o: RunAgentOptions): Promise<number> {
  const cfg = loadAgentConfig(o.configs);
  if (o.exitAfterAuth) cfg.exitAfterAuth = true;
  const log = new AgentLog(levelOf(o.logLevel ?? cfg.logLevel ?? process.env.VAULT_LOG_LEVEL));
  const agent = new Agent(cfg, log);
  // Signals go to the agent, which passes them to its exec child or stops.
  const restore = forwardSignals((sig) => {
    agent.signal(sig);
    return null;
  });
  try {
    return await agent.run();
  } finally {
    restore();
  }
}
