/**
 * AWS Secrets Manager fake for the calls keyhold makes (JSON 1.1 protocol, `X-Amz-Target`
 * routing; SigV4 is not checked): CreateSecret, PutSecretValue, RestoreSecret, DeleteSecret, with
 * the error codes and wording of the real service for a secret in its recovery window, which moto
 * does not reproduce (moto lets PutSecretValue write a deleted secret and answers CreateSecret with
 * ResourceExistsException). `calls` records the operation names in arrival order.
 */
import { FakeProvider, jsonBody, type FakeReply, type FakeRequest } from './fake-server.js';

/** One stored secret. */
export interface AwsSecret {
  value: string;
  tags: Record<string, string>;
  /** Set while the secret is in its recovery window. */
  deletedAt?: number;
}

const awsErr = (status: number, type: string, message: string): FakeReply => ({
  status,
  json: { __type: type, message },
  headers: { 'Content-Type': 'application/x-amz-json-1.1', 'x-amzn-ErrorType': type },
});
const ok = (json: unknown): FakeReply => ({
  status: 200,
  json,
  headers: { 'Content-Type': 'application/x-amz-json-1.1' },
});

/** Secrets Manager fake for one account and region. */
export class AwsSmFake extends FakeProvider {
  readonly secrets = new Map<string, AwsSecret>();
  /** Operation names received (e.g. "CreateSecret"). */
  readonly calls: string[] = [];
  /** Refuse CreateSecret with AccessDeniedException (an IAM policy without secretsmanager:CreateSecret). */
  denyCreate = false;

  /** Value of a live secret, or undefined. */
  valueOf(name: string): string | undefined {
    const s = this.secrets.get(name);
    return s && s.deletedAt === undefined ? s.value : undefined;
  }

  /** Put a secret as if created outside keyhold (optionally in its recovery window). */
  seed(name: string, value: string, opts: { deleted?: boolean } = {}): void {
    this.secrets.set(name, { value, tags: {}, deletedAt: opts.deleted ? Date.now() : undefined });
  }

  protected handle(r: FakeRequest): FakeReply {
    const target = String(r.headers['x-amz-target'] ?? '');
    const op = target.replace(/^secretsmanager\./, '');
    this.calls.push(op);
    const b = jsonBody(r) ?? {};
    const id = String(b.SecretId ?? b.Name ?? '');
    const s = this.secrets.get(id);
    const arn = `arn:aws:secretsmanager:us-east-1:123456789012:secret:${id}-AbCdEf`;
    switch (op) {
      case 'CreateSecret': {
        if (this.denyCreate)
          return awsErr(400, 'AccessDeniedException', 'User is not authorized to perform: secretsmanager:CreateSecret');
        if (s?.deletedAt !== undefined)
          return awsErr(
            400,
            'InvalidRequestException',
            "You can't create this secret because a secret with this name is already scheduled for deletion.",
          );
        if (s)
          return awsErr(
            400,
            'ResourceExistsException',
            `The operation failed because the secret ${id} already exists.`,
          );
        const tags = Object.fromEntries(
          ((b.Tags ?? []) as Array<{ Key: string; Value: string }>).map((t) => [t.Key, t.Value]),
        );
        this.secrets.set(id, { value: String(b.SecretString ?? ''), tags });
        return ok({ ARN: arn, Name: id, VersionId: 'v1' });
      }
      case 'PutSecretValue': {
        if (!s) return awsErr(400, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
        if (s.deletedAt !== undefined)
          return awsErr(
            400,
            'InvalidRequestException',
            "You can't perform this operation on the secret because it was marked for deletion.",
          );
        s.value = String(b.SecretString ?? '');
        return ok({ ARN: arn, Name: id, VersionId: 'v2' });
      }
      case 'RestoreSecret': {
        if (!s) return awsErr(400, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
        delete s.deletedAt;
        return ok({ ARN: arn, Name: id });
      }
      case 'DeleteSecret': {
        if (!s) return awsErr(400, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
        if (b.ForceDeleteWithoutRecovery) this.secrets.delete(id);
        else s.deletedAt = Date.now();
        return ok({ ARN: arn, Name: id, DeletionDate: Date.now() / 1000 });
      }
      default:
        return awsErr(400, 'UnknownOperationException', `unknown operation ${op}`);
    }
  }
}
