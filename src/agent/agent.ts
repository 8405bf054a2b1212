/**
 * `keyhold agent`: puts the parts together from a configuration. Auto-auth (auth/) feeds its token
 * to the sinks, the template runner (templates/), the exec supervisor (exec-runner.ts) and the API
 * proxy (proxy/). The agent ends on SIGINT/SIGTERM, after `exit_after_auth`, when every template
 * has rendered once in a run with nothing else to do... as Vault Agent does; with `exec`, it ends
 * with the child's exit code.
 */
import { rmSync, writeFileSync } from 'node:fs';
import type { AgentConfig } from './config.js';
import type { AgentLog } from './log.js';
import { Upstream } from './upstream.js';
import { AuthHandler } from './auth/auth-handler.js';
import { authMethod } from './auth/methods.js';
import { FileSink } from './auth/sink.js';
import { TemplateRunner } from './template-runner.js';
import { ExecRunner } from './exec-runner.js';
import { ApiProxy } from './proxy/api-proxy.js';
import type { TokenSource } from './token-source.js';

class FixedToken implements TokenSource {
  constructor(private readonly token: string | undefined) {}
  current(): string | undefined {
    return this.token;
  }
  onToken(): () => void {
    return () => {};
  }
  suspect(): void {}
}

export class Agent {
  private auth?: AuthHandler;
  private templates?: TemplateRunner;
  private execRunner?: ExecRunner;
  private readonly proxies: ApiProxy[] = [];
  private readonly done: Promise<number>;
  private finish!: (code: number) => void;
  private finished = false;

  constructor(
    private readonly cfg: AgentConfig,
    private readonly log: AgentLog,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.done = new Promise((r) => (this.finish = r));
  }

  /** Start everything; resolves with the exit code when the agent is done. */
  async run(): Promise<number> {
    const up = new Upstream(this.cfg.vault, this.env);
    let tokens: TokenSource;
    if (this.cfg.autoAuth) {
      const method = authMethod(this.cfg.autoAuth.method);
      const sinks = this.cfg.autoAuth.sinks.map((s) => new FileSink(s));
      this.auth = new AuthHandler(up, method, this.cfg.autoAuth.method, sinks, this.log, (e) => this.fail(e));
      tokens = this.auth;
    } else {
      tokens = new FixedToken(this.env.KEYHOLD_TOKEN || this.env.VAULT_TOKEN);
    }
    // Everything that can refuse the configuration (templates that do not parse) before anything starts.
    if (this.cfg.templates.length)
      this.templates = new TemplateRunner(this.cfg, up, tokens, this.log, (e) => this.fail(e));
    if (this.cfg.exec && !this.cfg.exitAfterAuth)
      this.execRunner = new ExecRunner(
        this.cfg,
        up,
        tokens,
        this.log,
        (code) => this.stop(code),
        (e) => this.fail(e),
      );
    try {
      for (const l of this.cfg.listeners) {
        const p = new ApiProxy(l, this.cfg, up, tokens, this.log, () => this.stop(0));
        this.proxies.push(p);
        await p.listen();
      }
    } catch (e) {
      this.stop(1);
      throw e;
    }
    if (this.cfg.pidFile) writeFileSync(this.cfg.pidFile, `${process.pid}`, { mode: 0o640 });
    if (this.auth) {
      this.auth.start();
      if (this.cfg.exitAfterAuth) {
        await this.auth.ready();
        this.log.info('agent', 'exit_after_auth: authenticated, exiting');
        try {
          // Vault renders the templates once before exiting.
          await this.templates?.renderOnce();
        } catch (e) {
          this.stop(1);
          throw e;
        }
        this.stop(0);
        return this.done;
      }
    }
    this.execRunner?.start();
    this.templates?.start();
    if (!this.cfg.autoAuth && !this.templates && !this.execRunner && this.proxies.length === 0) {
      this.log.warn('agent', 'nothing to do: the configuration has no auto_auth, template, exec or listener');
      this.stop(0);
    }
    return this.done;
  }

  /** A signal reached the agent: pass it to the exec child, or stop. */
  signal(sig: NodeJS.Signals): void {
    if (this.execRunner?.forward(sig)) return;
    if (sig === 'SIGINT' || sig === 'SIGTERM') this.stop(0);
  }

  private fail(e: Error): void {
    this.log.error('agent', e.message);
    this.stop(1);
  }

  stop(code: number): void {
    if (this.finished) return;
    this.finished = true;
    this.auth?.stop();
    this.templates?.stop();
    for (const p of this.proxies) p.close();
    if (this.cfg.pidFile) rmSync(this.cfg.pidFile, { force: true });
    void (this.execRunner?.stop() ?? Promise.resolve()).then(() => this.finish(code));
  }
}
