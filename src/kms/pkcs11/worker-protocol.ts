/**
 * Messages between the main thread and a PKCS#11 library's worker thread (pkcs11-worker.ts). Plain
 * structured-clone data: Buffers travel as Uint8Array copies; the PIN crosses only this in-memory
 * channel and is never logged or echoed back. Sign/encrypt/decrypt calls and their byte results
 * normally travel through the shared rings instead (worker-ring.ts); these messages carry the other
 * calls, errors, what does not fit a ring, and bells.
 */

/** How a key is found (or generated) on a token. */
export interface KeySpec {
  /** Decimal slot id, or undefined when the token is chosen by label. */
  slot?: string;
  tokenLabel?: string;
  pin: string;
  keyLabel?: string;
  /** CKA_ID bytes. */
  keyId?: Uint8Array;
  /** Open read-write sessions for every operation (CloudHSM v5 workaround, Vault's force_rw_session). */
  forceRw: boolean;
}

/** What to generate when a key is missing and generation is allowed. */
export interface GenerateSpec {
  kind: 'rsa' | 'ec' | 'aes';
  bits?: number;
  /** DER OID of the curve (CKA_EC_PARAMS). */
  ecParams?: Uint8Array;
  /** Replace an existing key with the same label/id (allow_replace_key). */
  replace?: boolean;
}

/** Facts about a key found on the token. */
export interface KeyFacts {
  kind: 'rsa' | 'ec' | 'aes';
  /** RSA modulus bits or AES key bits. */
  bits?: number;
  /** DER OID of the curve for EC keys. */
  ecParams?: Uint8Array;
  /** RSA public key (modulus, exponent) or EC point (uncompressed, unwrapped from the OCTET STRING). */
  modulus?: Uint8Array;
  publicExponent?: Uint8Array;
  ecPoint?: Uint8Array;
  /** CKA_ID of the private/secret key. */
  id: Uint8Array;
  label: string;
  /** Whether this call generated the key. */
  generated: boolean;
}

/** Mechanism parameters (a tagged union the worker turns into pkcs11js parameter objects). */
export type MechParams =
  | { type: 'none' }
  | { type: 'pss'; hashAlg: number; mgf: number; saltLen: number }
  | { type: 'oaep'; hashAlg: number; mgf: number }
  | { type: 'gcm'; iv: Uint8Array; aad?: Uint8Array; tagBits: number };

/** A request to the worker. */
export type WorkerRequest =
  | { id: number; op: 'load'; library: string }
  | { id: number; op: 'open'; ref: string; spec: KeySpec; generate?: GenerateSpec }
  | { id: number; op: 'sign'; ref: string; mechanism: number; params: MechParams; data: Uint8Array; outLen: number }
  | {
      id: number;
      op: 'encrypt' | 'decrypt';
      ref: string;
      mechanism: number;
      params: MechParams;
      data: Uint8Array;
      outLen: number;
    }
  | { id: number; op: 'random'; ref: string; length: number }
  | { id: number; op: 'attributes'; ref: string }
  | { id: number; op: 'close'; ref: string }
  | { id: number; op: 'inline'; ref: string }
  | { id: number; op: 'stats' };

/**
 * What the main thread needs to make a fast AES-GCM key's calls itself (inline-gcm.ts): the module's
 * generation (CTL.INLINE_GATE), the token's slot, the key object's handle, and how long one 64-byte
 * encrypt took the worker (the second fastest of a few, microseconds).
 */
export interface InlineFacts {
  gate: number;
  slot: Uint8Array;
  key: Uint8Array;
  forceRw: boolean;
  micros: number;
}

/** A PKCS#11 or binding error, as data (never the PIN). */
export interface WorkerError {
  /** CKR name (`CKR_PIN_INCORRECT`) or a keyhold reason (`library`, `token`, `key`, `binding`). */
  name: string;
  /** Numeric CKR code when the error came from the token. */
  code?: number;
  message: string;
}

/** A reply from the worker. */
export type WorkerReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WorkerError };

/** A message to the worker: a batch of requests (hot calls packed in `frames`, worker-frames.ts). */
export interface WorkerBatch {
  /** Only a wake-up: requests are waiting in the shared request ring (worker-ring.ts). */
  bell?: boolean;
  /** Key refs the frames point at by index. */
  refs: string[];
  frames: ArrayBuffer | null;
  /** Other requests, as objects. */
  calls: WorkerRequest[];
}

/**
 * A message from the worker: replies, and `acks` = how many request batches it has taken in (1 on the
 * message that ends a batch's synchronous part, 0 on later replies of work on libuv's pool).
 */
export interface WorkerMessage {
  /** Results are waiting in the shared result ring (worker-ring.ts). */
  bell?: boolean;
  acks: number;
  /** Errors and results that are not bytes. */
  replies: WorkerReply[];
  /** Byte results, packed (worker-frames.ts). */
  results: ArrayBuffer | null;
}

/** Counters the tests and `stats` read. */
export interface WorkerStats {
  logins: number;
  sessionsOpen: number;
  reinitializations: number;
  inFlight: number;
  maxInFlight: number;
  /** Requests taken from the shared request ring (the rest came by message). */
  ringRequests: number;
}
