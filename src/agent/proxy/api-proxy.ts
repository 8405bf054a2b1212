import type { AgentConfig, ListenerConfig } from '../config.js';
import type { AgentLog } from '../log.js';
import type { Upstream } from '../upstream.js';
import type { TokenSource } from '../agent.js';

export class ApiProxy {
  constructor(
    readonly l: ListenerConfig,
    readonly cfg: AgentConfig,
    readonly up: Upstream,
    readonly tokens: TokenSource,
    readonly log: AgentLog,
    readonly onQuit: () => void,
  ) {}
  async listen(): Promise<void> {}
  close(): void {}
}
