/** Where the agent's parts get the token from: auto-auth, or a fixed one (VAULT_TOKEN) without auto_auth. */
export interface TokenSource {
  current(): string | undefined;
  onToken(l: (token: string) => void): () => void;
  /** A request with the token got "permission denied": check it, log in again if it is no longer valid. */
  suspect(): void;
}
