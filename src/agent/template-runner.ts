/**
 * Vault Agent's `template` stanzas: render each template with the agent's token, write the
 * destination only when its content changes (atomically, with `perms`, else the existing file's
 * mode, else 0644), then run its `command` (through `/bin/sh -c` for a single string) within
 * `command_timeout`. Templates are rendered again when a secret they use is due (see
 * secret-source.ts: `static_secret_render_interval` for KV, two thirds of the lease for leased
 * secrets) and when auto-auth gets a new token. Fetch failures are retried with backoff;
 * `template_config.exit_on_retry_failure` makes the agent exit once the retries are spent.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, copyFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TokenSource } from './token-source.js';
import type { AgentConfig, TemplateConfig } from './config.js';
import type { AgentLog } from './log.js';
import { writeAtomic } from './auth/sink.js';
import { SecretSource, renderWithSecrets } from './secret-source.js';
import { GoTemplate, TemplateError, type TemplateFunc } from './template/exec.js';
import { consulTemplateFunctions } from './template/functions.js';
import type { Upstream } from './upstream.js';

const WHO = 'agent.template';

/** A template with its `secret` function slot (bound per render pass). */
export interface BoundTemplate {
  template: GoTemplate;
  bind: (fn: TemplateFunc) => void;
}

/** Parse a template's text with consul-template's functions and a rebindable `secret`. */
export function bindTemplate(
  name: string,
  text: string,
  o: { leftDelim?: string; rightDelim?: string; errorOnMissingKey?: boolean },
): BoundTemplate {
  let current: TemplateFunc = () => null;
  const funcs = { ...consulTemplateFunctions(), secret: (...a: unknown[]) => current(...a) };
  const template = new GoTemplate(name, text, funcs, o);
  return { template, bind: (fn) => (current = fn) };
}

interface Entry {
  cfg: TemplateConfig;
  bound: BoundTemplate;
  used: Set<string>;
  /** Rendered at least once. */
  rendered: boolean;
}

export class TemplateRunner {
  private readonly entries: Entry[];
  private readonly source: SecretSource;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private again = false;
  private failures = 0;
  private offToken: (() => void) | undefined;

  constructor(
    private readonly cfg: AgentConfig,
    up: Upstream,
    private readonly tokens: TokenSource,
    private readonly log: AgentLog,
    private readonly onFatal: (e: Error) => void,
  ) {
    this.source = new SecretSource(up, tokens, cfg.templateConfig.staticSecretRenderInterval, log);
    this.entries = cfg.templates.map((t) => {
      let text = t.contents;
      if (t.source !== undefined) {
        try {
          text = readFileSync(t.source, 'utf8');
        } catch (e) {
          throw new Error(`template source ${t.source}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      }
      const bound = bindTemplate(t.name, text ?? '', {
        leftDelim: t.leftDelim,
        rightDelim: t.rightDelim,
        errorOnMissingKey: t.errorOnMissingKey,
      });
      return { cfg: t, bound, used: new Set<string>(), rendered: false };
    });
  }

  start(): void {
    this.offToken = this.tokens.onToken(() => {
      // A new token: read everything again with it.
      this.source.clear();
      this.kick();
    });
    if (this.tokens.current()) this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.offToken?.();
    if (this.timer) clearTimeout(this.timer);
  }

  /** Render every template once (exit_after_auth). */
  async renderOnce(): Promise<void> {
    await this.renderAll(true);
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = this.renderAll(false).finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private schedule(seconds: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(), Math.max(50, seconds * 1000));
  }

  private async renderAll(once: boolean): Promise<void> {
    this.source.expire();
    try {
      for (const e of this.entries) await this.renderOne(e);
      this.failures = 0;
    } catch (err) {
      this.failures++;
      const msg = logMessage(err);
      this.log.error(WHO, msg);
      if (once) throw err;
      const retries = this.cfg.vault.numRetries;
      if (this.failures > retries || isTemplateError(err)) {
        if (this.cfg.templateConfig.exitOnRetryFailure) {
          this.onFatal(
            new Error(`template rendering failed${isTemplateError(err) ? '' : ` after ${retries} retries`}: ${msg}`),
          );
          return;
        }
      }
      // Backoff 250ms doubling up to 1m, as consul-template's retries.
      this.schedule(Math.min(60, 0.25 * 2 ** Math.min(this.failures - 1, 8)));
      return;
    }
    const used = new Set(this.entries.flatMap((e) => [...e.used]));
    const due = this.source.nextDue(used);
    const wait = Number.isFinite(due) ? (due - Date.now()) / 1000 : this.cfg.templateConfig.staticSecretRenderInterval;
    this.schedule(Math.max(0.05, wait));
  }

  private async renderOne(e: Entry): Promise<void> {
    const { text, used } = await renderWithSecrets(e.bound.template, this.source, e.bound.bind);
    e.used = used;
    const dest = e.cfg.destination;
    let old: string | undefined;
    let oldMode: number | undefined;
    try {
      old = readFileSync(dest, 'utf8');
      oldMode = statSync(dest).mode & 0o7777;
    } catch {
      old = undefined;
    }
    const first = !e.rendered;
    e.rendered = true;
    if (old === text && (e.cfg.perms === undefined || e.cfg.perms === oldMode)) {
      if (first) this.log.debug(WHO, `${dest}: up to date`);
      return;
    }
    if (e.cfg.createDestDirs) mkdirSync(dirname(dest), { recursive: true });
    if (e.cfg.backup && old !== undefined) copyFileSync(dest, `${dest}.bak`);
    writeAtomic(dest, text, e.cfg.perms ?? oldMode ?? 0o644);
    this.log.info(WHO, `rendered ${e.cfg.name} => ${dest}`);
    if (e.cfg.command) await this.runCommand(e.cfg);
  }

  private runCommand(t: TemplateConfig): Promise<void> {
    const cmd = t.command!;
    return new Promise((resolve) => {
      const p = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'inherit', 'inherit'], env: process.env });
      const timer = setTimeout(() => {
        this.log.error(WHO, `${t.destination}: command timed out after ${t.commandTimeout}s; killing it`);
        p.kill('SIGKILL');
      }, t.commandTimeout * 1000);
      p.on('error', (err) => {
        clearTimeout(timer);
        this.log.error(
          WHO,
          `${t.destination}: command failed to start: ${(err as NodeJS.ErrnoException).code ?? err.message}`,
        );
        resolve();
      });
      p.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (code !== 0) this.log.error(WHO, `${t.destination}: command exited with ${signal ?? code}`);
        else this.log.debug(WHO, `${t.destination}: command done`);
        resolve();
      });
    });
  }
}

/** What may be logged of a rendering error: template errors without data values (TemplateError.logMessage). */
export function logMessage(e: unknown): string {
  return e instanceof TemplateError ? e.logMessage : (e as Error).message;
}

function isTemplateError(e: unknown): boolean {
  return e instanceof Error && e.name === 'TemplateError';
}
