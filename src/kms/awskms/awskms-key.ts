/**
 * A managed key in AWS KMS (`awskms` type, reference managed-keys-wire.md 1.4 and 6): Sign in KMS,
 * verification with the public key from GetPublicKey; SYMMETRIC_DEFAULT keys (a keyhold extension,
 * `key_type=AES`) encrypt and decrypt in KMS with the associated data as encryption context.
 * Connections go through the secret-sync network guard (loopback, private ranges and ports other
 * than 80/443 are refused unless the key's rules allow them).
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { KeyholdError, invalid, unavailable } from '../../framework/errors.js';
import { NetworkGuard, type NetworkRules } from '../../sync/network-guard.js';
import { verifyDigest } from '../verify.js';
import type { KmsCapabilities, KmsKey, KmsSignOptions } from '../../framework/kms-key.js';

/** Configuration of an AWS KMS key. */
export interface AwsKmsKeyOptions {
  accessKey?: string;
  secretKey?: string;
  region?: string;
  /** Custom endpoint (moto in tests). */
  endpoint?: string;
  /** Key id, ARN or `alias/...` (must be an alias when generating). */
  kmsKey: string;
  keyType: 'RSA' | 'ECDSA' | 'AES';
  keyBits?: number;
  curve?: string;
  /** Create the key (and the alias) when the alias does not exist. */
  generate?: boolean;
  network?: Partial<NetworkRules>;
  timeoutMs?: number;
}

type Sdk = typeof import('@aws-sdk/client-kms');

const SPEC: Record<string, string> = {
  RSA2048: 'RSA_2048',
  RSA3072: 'RSA_3072',
  RSA4096: 'RSA_4096',
  P256: 'ECC_NIST_P256',
  P384: 'ECC_NIST_P384',
  P521: 'ECC_NIST_P521',
};
/** KMS SigningAlgorithm per padding and hash (AWS KMS API reference, SigningAlgorithmSpec). */
function signingAlgorithm(kind: 'rsa' | 'ec', o: KmsSignOptions, curveBytes: number): string {
  if (!/^sha(256|384|512)$/.test(o.hash))
    throw invalid('hash_algorithm', `${o.hash} is not supported by AWS KMS (sha2-256, sha2-384, sha2-512 only)`);
  const bits = o.hash.slice(3);
  if (kind === 'ec') {
    const want = curveBytes === 32 ? '256' : curveBytes === 48 ? '384' : '512';
    if (bits !== want) throw invalid('hash_algorithm', `AWS KMS signs with this curve only over sha2-${want}`);
    return `ECDSA_SHA_${bits}`;
  }
  return o.padding === 'pss' ? `RSASSA_PSS_SHA_${bits}` : `RSASSA_PKCS1_V1_5_SHA_${bits}`;
}

function awsError(e: unknown): KeyholdError {
  if (e instanceof KeyholdError) return e;
  const err = e as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const name = err.name ?? 'Error';
  const status = err.$metadata?.httpStatusCode;
  const text = `awskms: ${name}: ${(err.message ?? '').slice(0, 300)}`;
  if (name === 'InvalidCiphertextException') return invalid('cipher: message authentication failed');
  if (status !== undefined && status >= 400 && status < 500 && name !== 'ThrottlingException') return invalid(text);
  return unavailable(text);
}

/** A key in AWS KMS. */
export class AwsKmsKey implements KmsKey {
  readonly provider = 'awskms' as const;
  readonly capabilities: KmsCapabilities;
  private pub: KeyObject | null = null;

  constructor(
    private readonly sdk: Sdk,
    private readonly client: InstanceType<Sdk['KMSClient']>,
    /** The key's ARN. */
    readonly keyArn: string,
    readonly kind: 'rsa' | 'ec' | 'aes',
  ) {
    const asym = kind !== 'aes';
    this.capabilities = { sign: asym, verify: asym, encrypt: !asym, decrypt: !asym };
  }

  /** Read the public key (asymmetric keys). */
  async load(): Promise<void> {
    if (this.kind === 'aes') return;
    try {
      const r = await this.client.send(new this.sdk.GetPublicKeyCommand({ KeyId: this.keyArn }));
      this.pub = createPublicKey({ key: Buffer.from(r.PublicKey!), format: 'der', type: 'spki' });
    } catch (e) {
      throw awsError(e);
    }
  }

  publicKey(): KeyObject | null {
    return this.pub;
  }

  private curveBytes(): number {
    const c = this.pub?.asymmetricKeyDetails?.namedCurve;
    return c === 'prime256v1' ? 32 : c === 'secp384r1' ? 48 : 66;
  }

  /**
   * Sign. With the original `message` (up to 4096 bytes) KMS hashes it itself (MessageType RAW);
   * otherwise the digest is sent with MessageType DIGEST. moto ignores DIGEST (reference 6.3), so
   * RAW is preferred whenever the message is at hand; both yield the same signature on AWS.
   */
  async sign(digest: Buffer, o: KmsSignOptions): Promise<Buffer> {
    if (!this.capabilities.sign) throw invalid('this AWS KMS key does not sign (key_type AES)');
    const alg = signingAlgorithm(this.kind as 'rsa' | 'ec', o, this.curveBytes());
    const raw = o.message && o.message.length > 0 && o.message.length <= 4096;
    try {
      const r = await this.client.send(
        new this.sdk.SignCommand({
          KeyId: this.keyArn,
          Message: raw ? o.message : digest,
          MessageType: raw ? 'RAW' : 'DIGEST',
          SigningAlgorithm: alg as never,
        }),
      );
      return Buffer.from(r.Signature!);
    } catch (e) {
      throw awsError(e);
    }
  }

  async verify(digest: Buffer, signature: Buffer, o: KmsSignOptions): Promise<boolean> {
    if (!this.pub) throw invalid('this AWS KMS key does not verify (key_type AES)');
    return verifyDigest(this.pub, digest, signature, {
      ...o,
      padding: this.kind === 'rsa' ? (o.padding ?? 'pkcs1v15') : undefined,
    });
  }

  async encrypt(plaintext: Buffer, o: { aad?: Buffer; iv?: Buffer } = {}): Promise<Buffer> {
    if (!this.capabilities.encrypt) throw invalid('this AWS KMS key does not encrypt (only key_type AES keys do)');
    if (o.iv) throw invalid('nonce', 'cannot be given for an AWS KMS key');
    if (plaintext.length < 1 || plaintext.length > 4096) throw invalid('plaintext', 'AWS KMS encrypts 1 to 4096 bytes');
    try {
      const r = await this.client.send(
        new this.sdk.EncryptCommand({
          KeyId: this.keyArn,
          Plaintext: plaintext,
          EncryptionContext: o.aad ? { aad: o.aad.toString('base64') } : undefined,
        }),
      );
      return Buffer.from(r.CiphertextBlob!);
    } catch (e) {
      throw awsError(e);
    }
  }

  async decrypt(ciphertext: Buffer, o: { aad?: Buffer } = {}): Promise<Buffer> {
    if (!this.capabilities.decrypt) throw invalid('this AWS KMS key does not decrypt (only key_type AES keys do)');
    try {
      const r = await this.client.send(
        new this.sdk.DecryptCommand({
          KeyId: this.keyArn,
          CiphertextBlob: ciphertext,
          EncryptionContext: o.aad ? { aad: o.aad.toString('base64') } : undefined,
        }),
      );
      return Buffer.from(r.Plaintext!);
    } catch (e) {
      throw awsError(e);
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/** Open (and when allowed, create) an AWS KMS key; 400 for a bad configuration, 503 when KMS is unreachable. */
export async function openAwsKmsKey(o: AwsKmsKeyOptions): Promise<AwsKmsKey> {
  const kind = o.keyType === 'RSA' ? 'rsa' : o.keyType === 'ECDSA' ? 'ec' : 'aes';
  const guard = new NetworkGuard({
    disable_strict_networking: false,
    allowed_ipv4_addresses: [],
    allowed_ipv6_addresses: [],
    allowed_ports: [],
    ...o.network,
  });
  if (o.endpoint) {
    try {
      guard.checkUrl(new URL(o.endpoint));
    } catch (e) {
      throw invalid('endpoint', (e as Error).message);
    }
  }
  const sdk = await import('@aws-sdk/client-kms');
  const agents = guard.agents();
  const client = new sdk.KMSClient({
    region: o.region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
    endpoint: o.endpoint || undefined,
    credentials: o.accessKey ? { accessKeyId: o.accessKey, secretAccessKey: o.secretKey ?? '' } : undefined,
    maxAttempts: 3,
    requestHandler: {
      httpAgent: agents.http,
      httpsAgent: agents.https,
      requestTimeout: o.timeoutMs ?? 10_000,
      connectionTimeout: o.timeoutMs ?? 10_000,
    },
  });
  try {
    let arn: string | undefined;
    try {
      const d = await client.send(new sdk.DescribeKeyCommand({ KeyId: o.kmsKey }));
      arn = d.KeyMetadata?.Arn;
      const usage = kind === 'aes' ? 'ENCRYPT_DECRYPT' : 'SIGN_VERIFY';
      if (d.KeyMetadata?.KeyUsage && d.KeyMetadata.KeyUsage !== usage)
        throw invalid(
          'kms_key',
          `the key's KeyUsage is ${d.KeyMetadata.KeyUsage}; key_type ${o.keyType} needs ${usage}`,
        );
      const spec = String(d.KeyMetadata?.KeySpec ?? '');
      if (
        spec &&
        !(kind === 'rsa'
          ? spec.startsWith('RSA_')
          : kind === 'ec'
            ? spec.startsWith('ECC_NIST')
            : spec === 'SYMMETRIC_DEFAULT')
      )
        throw invalid('kms_key', `the key's KeySpec ${spec} does not fit key_type ${o.keyType}`);
    } catch (e) {
      if ((e as { name?: string }).name !== 'NotFoundException' || !o.generate) throw e;
    }
    if (!arn) {
      if (!o.kmsKey.startsWith('alias/'))
        throw invalid('kms_key', 'must be an alias (alias/...) when allow_generate_key is set');
      const spec =
        kind === 'aes'
          ? 'SYMMETRIC_DEFAULT'
          : SPEC[kind === 'rsa' ? `RSA${o.keyBits ?? 0}` : (o.curve ?? '').toUpperCase().replace('-', '')];
      if (!spec)
        throw invalid(
          kind === 'rsa' ? 'key_bits' : 'curve',
          kind === 'rsa' ? 'must be 2048, 3072 or 4096' : 'must be P256, P384 or P521',
        );
      const k = await client.send(
        new sdk.CreateKeyCommand({
          KeySpec: spec as never,
          KeyUsage: kind === 'aes' ? 'ENCRYPT_DECRYPT' : 'SIGN_VERIFY',
          Description: 'keyhold managed key',
        }),
      );
      arn = k.KeyMetadata!.Arn!;
      await client.send(new sdk.CreateAliasCommand({ AliasName: o.kmsKey, TargetKeyId: k.KeyMetadata!.KeyId! }));
    }
    const key = new AwsKmsKey(sdk, client, arn, kind);
    await key.load();
    return key;
  } catch (e) {
    client.destroy();
    throw awsError(e);
  }
}
