/**
 * provider-a-sm: AWS Secrets Manager (reference sync-wire.md 1.5.2 and 3.1), through the official
 * SDK (JSON 1.1 protocol, SigV4), imported lazily so CLI start-up stays fast. The SDK's HTTP handler
 * uses the destination's guarded agents.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure, failureFromError } from '../failure.js';
import {
  baseUrl,
  checkUrlField,
  endpointField,
  tagsOf,
  type Connector,
  type ConnectorDeps,
  type DestinationTypeDef,
  type PutOptions,
} from './common.js';
import type { DestinationRecord } from '../types.js';
import type { AwsCredentials } from '../aws-sigv4.js';
import { AWS_ROLE_DEFAULTS, AWS_ROLE_FIELDS, checkAwsRoleFields, regionOf, sessionSourceOf } from './aws-role.js';
import { StsSessions, defaultStsEndpoint } from './aws-sts.js';

type Sdk = typeof import('@aws-sdk/client-secrets-manager');
type SmClient = InstanceType<Sdk['SecretsManagerClient']>;
type SmClientConfig = NonNullable<ConstructorParameters<Sdk['SecretsManagerClient']>[0]>;

/** The abort signal of each call in flight, by its command's input (see `abortByInput`). */
const callSignals = new WeakMap<object, AbortSignal>();
/** Where an attempt's request carries its call's signal to the request handler. */
const REQUEST_SIGNAL = Symbol('keyhold.abortSignal');

/**
 * Abort signals for a client built with `cacheMiddleware`. Without it the SDK resolves its whole
 * middleware stack for every call (about 0.2 ms of CPU per call, measured: a third of the SDK's
 * cost); the cached stack takes no per-call options, so the signal goes by the command's input: an
 * innermost middleware hangs it on each attempt's (signed) request, and the request handler hands
 * it to the HTTP request as `send(cmd, { abortSignal })` would. (The SDK's short wait between its
 * own attempts is not cut short; the attempt after it fails at once.)
 */
function abortByInput(client: SmClient): void {
  client.middlewareStack.add(
    (next) => (args) => {
      const signal = callSignals.get(args.input as object);
      if (signal && args.request && typeof args.request === 'object')
        Object.defineProperty(args.request, REQUEST_SIGNAL, { value: signal, configurable: true });
      return next(args);
    },
    { step: 'deserialize', priority: 'low', name: 'keyholdAbortSignal' },
  );
  const handler = client.config.requestHandler as {
    handle(request: unknown, options?: Record<string, unknown>): Promise<unknown>;
  };
  const handle = handler.handle.bind(handler);
  handler.handle = (request, options) => {
    const signal = (request as { [REQUEST_SIGNAL]?: AbortSignal })[REQUEST_SIGNAL];
    return handle(request, signal ? { ...options, abortSignal: signal } : options);
  };
}

/** Send `command` on a client set up by `abortByInput`, abortable by `signal`. */
async function sendWith<O>(client: SmClient, command: { input: object }, signal: AbortSignal): Promise<O> {
  signal.throwIfAborted();
  callSignals.set(command.input, signal);
  try {
    return (await client.send(command as never)) as O;
  } finally {
    callSignals.delete(command.input);
  }
}

/** AWS error codes that a retry may cure. */
const RETRYABLE = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'InternalServiceError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
]);

/** AWS's wording for a secret in its recovery window ("marked for deletion", "scheduled for deletion"). */
const DELETION = /marked for deletion|scheduled for deletion/i;

function errorCode(e: unknown): string {
  const err = e as { name?: string; Code?: string; __type?: string };
  return (err?.name ?? err?.Code ?? '').replace(/^.*#/, '');
}

/** Map an AWS SDK error to a sync failure (codes as the open sync plugin classifies them, reference 1.10). */
export function classifyAwsError(e: unknown, what: string): SyncFailure {
  if (e instanceof SyncFailure) return e; // from the STS session (aws-sts.ts), already classified
  const err = e as { $metadata?: { httpStatusCode?: number }; $fault?: string; message?: string };
  const status = err?.$metadata?.httpStatusCode;
  if (status === undefined) {
    // No credentials from the default chain, or no region: a configuration problem, not a bug.
    if ((e as Error)?.name === 'CredentialsProviderError' || /credential|region is missing/i.test(err?.message ?? '')) {
      return new SyncFailure('CLIENT_SIDE_ERROR', `${what}: ${String(err?.message ?? 'no credentials').slice(0, 200)}`);
    }
    return failureFromError(e, what);
  }
  const code = errorCode(e);
  const msg = `${what}: HTTP ${status} ${code}`;
  if (RETRYABLE.has(code) || status === 429 || status >= 500)
    return new SyncFailure('EXTERNAL_SERVICE_ERROR', msg, { retryable: true, httpStatus: status });
  // A name scheduled for deletion right after a force delete frees up shortly (deletion is asynchronous).
  if (code === 'InvalidRequestException' && DELETION.test(err.message ?? '')) {
    return new SyncFailure('EXTERNAL_SERVICE_ERROR', `${msg} (name still scheduled for deletion)`, {
      retryable: true,
      httpStatus: status,
    });
  }
  return new SyncFailure('CLIENT_SIDE_ERROR', msg, { httpStatus: status });
}

class AwsConnector implements Connector {
  private client: Promise<{ sdk: Sdk; client: SmClient }> | null = null;
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {}

  private sdk() {
    this.client ??= (async () => {
      const sdk = await import('@aws-sdk/client-secrets-manager');
      const c = this.dest.connection;
      const region = regionOf(c);
      const agents = this.deps.guard.agents();
      const client = new sdk.SecretsManagerClient({
        region,
        endpoint: c.endpoint_url ? baseUrl(c.endpoint_url, '') : undefined,
        credentials: await this.credentialsOf(sdk, region),
        // A transient failure (5xx, throttling, a reset connection) is retried at once by the SDK's
        // standard strategy, as AWS recommends, instead of showing EXTERNAL_SERVICE_ERROR and waiting
        // for the worker's backoff (>= 1 s); failures that persist still reach the worker.
        maxAttempts: 3,
        requestHandler: {
          httpAgent: agents.http,
          httpsAgent: agents.https,
          requestTimeout: this.deps.timeoutMs,
          connectionTimeout: this.deps.timeoutMs,
        },
        cacheMiddleware: true,
      });
      abortByInput(client);
      return { sdk, client };
    })();
    return this.client;
  }

  /** Static keys, an STS session (role_arn, or federation), or undefined: the SDK's default chain. */
  private async credentialsOf(sdk: Sdk, region: string): Promise<SmClientConfig['credentials']> {
    const c = this.dest.connection;
    const keys = c.access_key_id
      ? { accessKeyId: String(c.access_key_id), secretAccessKey: String(c.secret_access_key ?? '') }
      : undefined;
    const how = sessionSourceOf(this.dest, this.deps, async () => {
      if (keys) return keys;
      // The default chain (environment, shared files, container and instance roles) as the SDK resolves it.
      const probe = new sdk.SecretsManagerClient({ region });
      try {
        return await (probe.config.credentials as () => Promise<AwsCredentials>)();
      } finally {
        probe.destroy();
      }
    });
    if (!how) return keys;
    this.sts = new StsSessions(
      this.deps.http,
      baseUrl(c.sts_endpoint, defaultStsEndpoint(region)),
      region,
      how,
      this.deps.now,
    );
    const sts = this.sts;
    return () => sts.credentials();
  }

  /** The STS sessions of a destination with role_arn (null otherwise). */
  sts: StsSessions | null = null;

  private checkEndpoint(): void {
    const e = this.dest.connection.endpoint_url;
    if (e) {
      try {
        this.deps.guard.checkUrl(new URL(String(e)));
      } catch (err) {
        throw failureFromError(err, 'connect');
      }
    }
  }

  /**
   * Create or overwrite `name`. A name keyhold has no record of having written (`fresh`: a first
   * sync, or a new name after a template change) is most likely absent, so CreateSecret goes first:
   * one call instead of PutSecretValue + CreateSecret. An existing secret (ResourceExistsException),
   * one scheduled for deletion, or a caller allowed to write values but not to create secrets falls
   * back to the update path. Otherwise PutSecretValue goes first and CreateSecret follows when the
   * secret is missing.
   */
  async put(name: string, value: string, signal: AbortSignal, opts: PutOptions = {}): Promise<void> {
    this.checkEndpoint();
    const { sdk, client } = await this.sdk();
    let createError: unknown;
    if (opts.fresh) {
      try {
        await this.create(sdk, client, name, value, signal);
        return;
      } catch (e) {
        const code = errorCode(e);
        const exists =
          code === 'ResourceExistsException' ||
          (code === 'InvalidRequestException' && DELETION.test((e as Error).message ?? ''));
        if (!exists && code !== 'AccessDeniedException') throw classifyAwsError(e, 'CreateSecret');
        if (!exists) createError = e;
      }
    }
    try {
      await sendWith(client, new sdk.PutSecretValueCommand({ SecretId: name, SecretString: value }), signal);
      return;
    } catch (e) {
      const code = errorCode(e);
      if (code === 'InvalidRequestException' && DELETION.test((e as Error).message ?? '')) {
        // A secret in its recovery window (deleted outside keyhold): restore it, then write.
        try {
          await sendWith(client, new sdk.RestoreSecretCommand({ SecretId: name }), signal);
          await sendWith(client, new sdk.PutSecretValueCommand({ SecretId: name, SecretString: value }), signal);
          return;
        } catch (e2) {
          throw classifyAwsError(e2, 'RestoreSecret');
        }
      }
      if (code !== 'ResourceNotFoundException') throw classifyAwsError(e, 'PutSecretValue');
      // Missing, and creating it was already refused: report the refusal (not "not found").
      if (createError !== undefined) throw classifyAwsError(createError, 'CreateSecret');
    }
    try {
      await this.create(sdk, client, name, value, signal);
    } catch (e) {
      if (errorCode(e) === 'ResourceExistsException') {
        // Created concurrently: write the value.
        try {
          await sendWith(client, new sdk.PutSecretValueCommand({ SecretId: name, SecretString: value }), signal);
          return;
        } catch (e2) {
          throw classifyAwsError(e2, 'PutSecretValue');
        }
      }
      throw classifyAwsError(e, 'CreateSecret');
    }
  }

  private async create(sdk: Sdk, client: SmClient, name: string, value: string, signal: AbortSignal): Promise<void> {
    const tags = Object.entries(tagsOf(this.dest)).map(([Key, Value]) => ({ Key, Value }));
    const c = this.dest.connection;
    const kms = c.kms_key_id ? String(c.kms_key_id) : undefined;
    const replicas = (Array.isArray(c.replica_regions) ? (c.replica_regions as string[]) : []).map((Region) => ({
      Region,
    }));
    await sendWith(
      client,
      new sdk.CreateSecretCommand({
        Name: name,
        SecretString: value,
        Tags: tags,
        Description: 'Managed by keyhold secret sync',
        ...(kms ? { KmsKeyId: kms } : {}),
        ...(replicas.length ? { AddReplicaRegions: replicas } : {}),
      }),
      signal,
    );
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    this.checkEndpoint();
    const { sdk, client } = await this.sdk();
    try {
      // Force delete: a re-created association must be able to reuse the name at once (reference 3.1).
      await sendWith(client, new sdk.DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }), signal);
    } catch (e) {
      if (errorCode(e) === 'ResourceNotFoundException') return;
      // A primary secret with replicas cannot be deleted: drop its replicas first (replica_regions).
      if (
        (errorCode(e) === 'InvalidRequestException' || errorCode(e) === 'InvalidParameterException') &&
        /replica/i.test((e as Error).message ?? '')
      ) {
        try {
          const d = await sendWith<{ ReplicationStatus?: Array<{ Region?: string }> }>(
            client,
            new sdk.DescribeSecretCommand({ SecretId: name }),
            signal,
          );
          const regions = (d.ReplicationStatus ?? []).map((r) => r.Region).filter((r): r is string => Boolean(r));
          if (regions.length)
            await sendWith(
              client,
              new sdk.RemoveRegionsFromReplicationCommand({ SecretId: name, RemoveReplicaRegions: regions }),
              signal,
            );
          await sendWith(
            client,
            new sdk.DeleteSecretCommand({ SecretId: name, ForceDeleteWithoutRecovery: true }),
            signal,
          );
          return;
        } catch (e2) {
          if (errorCode(e2) === 'ResourceNotFoundException') return;
          throw classifyAwsError(e2, 'DeleteSecret');
        }
      }
      throw classifyAwsError(e, 'DeleteSecret');
    }
  }

  close(): void {
    void this.client?.then(({ client }) => client.destroy()).catch(() => {});
  }
}

/** The provider-a-sm destination type. */
export const providerASm: DestinationTypeDef = {
  type: 'provider-a-sm',
  provider: 'AWS Secrets Manager',
  fields: {
    access_key_id: f.string('Access key id; empty uses the default credential chain').sensitive(),
    secret_access_key: f.string('Secret access key; empty uses the default credential chain').sensitive(),
    region: f.string('Region; empty uses AWS_REGION / AWS_DEFAULT_REGION (then us-east-1)'),
    endpoint_url: endpointField,
    ...AWS_ROLE_FIELDS,
  },
  required: [],
  immutable: ['region'],
  defaults: { access_key_id: '', secret_access_key: '', region: '', endpoint_url: '', ...AWS_ROLE_DEFAULTS },
  defaultGranularity: 'secret-path',
  defaultTemplates: {
    'secret-path': 'vault/{{ .MountAccessor }}/{{ .SecretPath }}',
    'secret-key': 'vault/{{ .MountAccessor }}/{{ .SecretPath }}/{{ .SecretKey }}',
  },
  customTags: true,
  // docs.aws.amazon.com Secrets Manager TagResource: 50 tags, keys 1-128, values 0-256 characters.
  tagLimits: { max: 50, keyLength: 128, valueLength: 256, source: 'AWS Secrets Manager' },
  check(conn) {
    checkUrlField(conn, 'endpoint_url');
    if (Boolean(conn.access_key_id) !== Boolean(conn.secret_access_key)) {
      throw invalid('secret_access_key', 'access_key_id and secret_access_key must be given together');
    }
    checkAwsRoleFields(conn);
  },
  connect: (dest, deps) => new AwsConnector(dest, deps),
};
