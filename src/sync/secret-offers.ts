/**
 * Secrets read by `associations/set`, offered to the link's next attempt so that it need not read
 * the same version again. Any KV change makes every offer stale; an offer is used once, and only
 * within a second.
 */
import type { Clock } from '../framework/context.js';

/** A KV secret's latest version as read. */
export interface SecretVersion {
  data: Record<string, unknown>;
  version: number;
}

/** How long an offer may be used after it was made. */
const OFFER_MS = 1_000;

/** Offered reads by link key, and the KV change counter they are checked against. */
export class SecretOffers {
  private readonly offered = new Map<string, { secret: SecretVersion; kvChange: number; at: number }>();
  private kvChange = 0;

  constructor(private readonly clock: Clock) {}

  /** A KV secret changed somewhere (called synchronously from the KV event): offered reads are stale. */
  noteKvChange(): void {
    this.kvChange++;
    this.offered.clear();
  }

  /** A marker to take before reading a secret that will be offered. */
  get marker(): number {
    return this.kvChange;
  }

  /** Offer `secret`, read after `marker` was taken; ignored when any KV change has happened since. */
  offer(link: string, secret: SecretVersion, marker: number): void {
    if (marker !== this.kvChange) return;
    this.offered.set(link, { secret, kvChange: marker, at: this.clock.now() });
  }

  /** Take the offer for `link` (removing it): the secret when still valid, else undefined. */
  take(link: string): SecretVersion | undefined {
    const offer = this.offered.get(link);
    if (!offer) return undefined;
    this.offered.delete(link);
    return offer.kvChange === this.kvChange && this.clock.now() - offer.at < OFFER_MS ? offer.secret : undefined;
  }

  /** Drop every offer. */
  clear(): void {
    this.offered.clear();
  }
}
