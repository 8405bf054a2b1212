import type { AgentConfig } from './config.js';
import type { AgentLog } from './log.js';
import type { Upstream } from './upstream.js';
import type { TokenSource } from './agent.js';

export class ExecRunner {
  constructor(
    readonly cfg: AgentConfig,
    readonly up: Upstream,
    readonly tokens: TokenSource,
    readonly log: AgentLog,
    readonly onExit: (code: number) => void,
    readonly onFatal: (e: Error) => void,
  ) {}
  start(): void {}
  forward(_sig: NodeJS.Signals): boolean {
    return false;
  }
  async stop(): Promise<void> {}
}
