/**
 * Vault Agent's `exec` stanza: render the `env_template` variables, start `command` with them in its
 * environment (never argv), pass the agent's signals on to it, and end the agent with its exit code.
 * When a rendered value changes (secrets due again, or a new token) and
 * `restart_on_secret_changes = "always"`, the child is stopped with `restart_stop_signal` (SIGKILL
 * after 30s) and started again with the new values. Process handling is keyhold run's
 * (src/cli/child-process.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { TokenSource } from './token-source.js';
import type { AgentConfig } from './config.js';
import type { AgentLog } from './log.js';
import { startChild, stopChild, type Ending } from '../cli/child-process.js';
import { SecretSource, renderWithSecrets } from './secret-source.js';
import { bindTemplate, logMessage, type BoundTemplate } from './template-runner.js';
import type { Upstream } from './upstream.js';

const WHO = 'agent.exec';
const STOP_GRACE_SECONDS = 30;

export class ExecRunner {
  private readonly envs: { name: string; bound: BoundTemplate }[];
  private readonly source: SecretSource;
  private child: ChildProcess | null = null;
  private current: Record<string, string> | undefined;
  private restarting = false;
  private stopping = false;
  private exited: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private used = new Set<string>();
  private failures = 0;
  private busy = false;

  constructor(
    private readonly cfg: AgentConfig,
    up: Upstream,
    private readonly tokens: TokenSource,
    private readonly log: AgentLog,
    private readonly onExit: (code: number) => void,
    private readonly onFatal: (e: Error) => void,
  ) {
    this.source = new SecretSource(up, tokens, cfg.templateConfig.staticSecretRenderInterval, log);
    this.envs = cfg.envTemplates.map((e) => ({
      name: e.name,
      bound: bindTemplate(`env_template "${e.name}"`, e.contents, { errorOnMissingKey: e.errorOnMissingKey }),
    }));
  }

  start(): void {
    this.tokens.onToken(() => {
      this.source.clear();
      void this.tick();
    });
    if (this.tokens.current()) void this.tick();
  }

  /** Pass a signal to the child; false when there is none (the agent handles it). */
  forward(sig: NodeJS.Signals): boolean {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return false;
    this.child.kill(sig);
    return true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      stopChild(this.child, this.cfg.exec!.restartStopSignal, STOP_GRACE_SECONDS);
      await this.exited;
    }
  }

  private schedule(seconds: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), Math.max(50, seconds * 1000));
  }

  private async render(): Promise<Record<string, string>> {
    this.source.expire();
    const out: Record<string, string> = {};
    const used = new Set<string>();
    for (const e of this.envs) {
      const r = await renderWithSecrets(e.bound.template, this.source, e.bound.bind);
      out[e.name] = r.text;
      for (const k of r.used) used.add(k);
    }
    this.used = used;
    return out;
  }

  private async tick(): Promise<void> {
    if (this.stopping || this.busy) return;
    this.busy = true;
    try {
      const env = await this.render();
      this.failures = 0;
      const changed = !this.current || Object.keys(env).some((k) => env[k] !== this.current![k]);
      if (!this.child) {
        this.current = env;
        this.spawn();
      } else if (changed) {
        this.current = env;
        if (this.cfg.exec!.restartOnSecretChanges === 'always') {
          this.log.info(WHO, `a secret changed; restarting the child with ${this.cfg.exec!.restartStopSignal}`);
          this.restarting = true;
          stopChild(this.child, this.cfg.exec!.restartStopSignal, STOP_GRACE_SECONDS);
        } else this.log.info(WHO, 'a secret changed; not restarting (restart_on_secret_changes = "never")');
      }
      const due = this.source.nextDue(this.used);
      this.schedule(
        Number.isFinite(due) ? (due - Date.now()) / 1000 : this.cfg.templateConfig.staticSecretRenderInterval,
      );
    } catch (e) {
      this.failures++;
      this.log.error(WHO, logMessage(e));
      if (
        (e as Error).name === 'TemplateError' ||
        (this.failures > this.cfg.vault.numRetries && this.cfg.templateConfig.exitOnRetryFailure)
      ) {
        if (!this.child || this.cfg.templateConfig.exitOnRetryFailure) {
          this.onFatal(new Error(logMessage(e)));
          return;
        }
      }
      this.schedule(Math.min(60, 0.25 * 2 ** Math.min(this.failures - 1, 8)));
    } finally {
      this.busy = false;
    }
  }

  private spawn(): void {
    const command = this.cfg.exec!.command;
    let done!: () => void;
    this.exited = new Promise((r) => (done = r));
    this.log.info(WHO, `starting ${command[0]}`);
    const p = startChild(command, { ...process.env, ...this.current }, 'keyhold agent', (e: Ending, spawnFailed) => {
      done();
      if (this.child !== p) return;
      if (this.restarting && !spawnFailed && !this.stopping) {
        this.restarting = false;
        this.spawn();
        return;
      }
      this.child = null;
      const code = 'code' in e ? e.code : 128 + (signalNumber(e.signal) ?? 0);
      this.log.info(WHO, `child exited with ${'code' in e ? `code ${e.code}` : e.signal}`);
      if (!this.stopping) this.onExit(code);
    });
    this.child = p;
  }
}

function signalNumber(sig: NodeJS.Signals): number | undefined {
  return osConstants.signals[sig];
}
