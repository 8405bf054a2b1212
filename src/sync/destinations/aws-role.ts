/**
 * provider-a-sm without static keys (issue 31 part 2): the role fields (`role_arn`, `external_id`,
 * `role_session_name`, `sts_endpoint`), federation (federation.ts), a customer-managed key
 * (`kms_key_id`) and `replica_regions`, their checks, and how a destination gets its STS session.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import type { AwsCredentials } from '../aws-sigv4.js';
import type { DestinationRecord } from '../types.js';
import { checkUrlField, type ConnectorDeps } from './common.js';
import type { SessionSource } from './aws-sts.js';
import {
  FEDERATION_DEFAULTS,
  FEDERATION_FIELDS,
  checkFederationFields,
  federated,
  federationOf,
} from './federation.js';

/** Fields added to provider-a-sm. */
export const AWS_ROLE_FIELDS = {
  role_arn: f.string(
    'IAM role keyhold assumes with STS (from the given keys or the default credential chain, or by federation with identity_token_audience)',
  ),
  external_id: f.string("External id the role's trust policy requires (AssumeRole)"),
  role_session_name: f.string('Session name shown in CloudTrail (default keyhold-sync-<destination name>)'),
  sts_endpoint: f.string(
    'AWS STS endpoint (default https://sts.<region>.amazonaws.com); subject to the networking options',
  ),
  ...FEDERATION_FIELDS,
  kms_key_id: f.string(
    'KMS key (id, ARN or alias) that encrypts the secrets keyhold creates (default the account key aws/secretsmanager)',
  ),
  replica_regions: f.strings('Regions each secret keyhold creates is replicated to'),
};

export const AWS_ROLE_DEFAULTS = {
  role_arn: '',
  external_id: '',
  role_session_name: '',
  sts_endpoint: '',
  ...FEDERATION_DEFAULTS,
  kms_key_id: '',
  replica_regions: [] as string[],
};

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const SESSION_NAME = /^[\w+=,.@-]{2,64}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** The region of a connection (then AWS_REGION / AWS_DEFAULT_REGION, then us-east-1). */
export function regionOf(c: Record<string, unknown>): string {
  return String(c.region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1');
}

/** Check the role, federation, KMS and replica fields (400 naming the field). */
export function checkAwsRoleFields(conn: Record<string, unknown>): void {
  checkUrlField(conn, 'sts_endpoint');
  checkFederationFields(conn);
  const role = String(conn.role_arn ?? '');
  if (role && !ROLE_ARN.test(role))
    throw invalid('role_arn', 'must be an IAM role ARN such as arn:aws:iam::123456789012:role/keyhold-sync');
  if (!role && conn.external_id) throw invalid('external_id', 'applies only with role_arn');
  if (!role && conn.role_session_name) throw invalid('role_session_name', 'applies only with role_arn');
  if (conn.role_session_name && !SESSION_NAME.test(String(conn.role_session_name)))
    throw invalid('role_session_name', 'must be 2-64 characters of letters, digits and +=,.@_-');
  if (federated(conn)) {
    if (!role)
      throw invalid(
        'role_arn',
        'is required with identity_token_audience (the role AssumeRoleWithWebIdentity assumes)',
      );
    if (conn.access_key_id)
      throw invalid(
        'identity_token_audience',
        'federation needs no access keys: clear access_key_id and secret_access_key, or drop identity_token_audience',
      );
    if (conn.external_id)
      throw invalid('external_id', 'does not apply to federation (AssumeRoleWithWebIdentity has no external id)');
  }
  const replicas = Array.isArray(conn.replica_regions) ? (conn.replica_regions as string[]) : [];
  for (const r of replicas)
    if (!REGION.test(r))
      throw invalid('replica_regions', `"${String(r).slice(0, 40)}" is not an AWS region such as eu-west-1`);
  if (conn.region && replicas.includes(String(conn.region)))
    throw invalid('replica_regions', 'must not include the primary region');
  if (new Set(replicas).size !== replicas.length) throw invalid('replica_regions', 'lists a region twice');
  const kms = conn.kms_key_id;
  if (kms !== undefined && kms !== '' && (typeof kms !== 'string' || kms.length > 2048))
    throw invalid('kms_key_id', 'must be a KMS key id, ARN or alias');
}

/** How a destination gets an STS session, or null when it uses keys (or the default chain) directly. */
export function sessionSourceOf(
  dest: DestinationRecord,
  deps: ConnectorDeps,
  source: () => Promise<AwsCredentials>,
): SessionSource | null {
  const c = dest.connection;
  const roleArn = String(c.role_arn ?? '');
  if (!roleArn) return null;
  const sessionName = String(
    c.role_session_name || `keyhold-sync-${dest.name}`.replace(/[^\w+=,.@-]/g, '-').slice(0, 64),
  );
  if (federated(c)) return { kind: 'web-identity', roleArn, sessionName, ...federationOf(dest, deps) };
  return {
    kind: 'assume-role',
    source,
    roleArn,
    sessionName,
    ...(c.external_id ? { externalId: String(c.external_id) } : {}),
  };
}
