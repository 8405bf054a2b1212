import type { AgentConfig } from './config.js';
import type { AgentLog } from './log.js';
import type { Upstream } from './upstream.js';
import type { TokenSource } from './agent.js';

export class TemplateRunner {
  constructor(
    readonly cfg: AgentConfig,
    readonly up: Upstream,
    readonly tokens: TokenSource,
    readonly log: AgentLog,
    readonly onFatal: (e: Error) => void,
  ) {}
  start(): void {}
  async renderOnce(): Promise<void> {}
  stop(): void {}
}
