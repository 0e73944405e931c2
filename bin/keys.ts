/**
 * The key tool: `npm run keys -- create|list|revoke`.
 *
 * Against AWS it uses the same variables as the Lambda functions (TABLE_NAME plus the usual AWS
 * credentials and region). Without TABLE_NAME it manages the keys of the local stack running on
 * $DATA_DIR (default .local), found through the stack.json file the stack writes when it starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createApiKey, limitsFor, listApiKeys, revokeApiKey, rotateWebhookSecret, type ApiKey, type KeyStore } from '#lib/accounts/keys.ts';
import { isTierName, TIER_NAMES } from '#lib/accounts/tiers.ts';
import { dynamo } from '#lib/aws/clients.ts';
import { localAwsEnvironment, stackInfoPath, type StackInfo } from '#lib/local/stack.ts';

const USAGE = `Usage:
  npm run keys -- create --tier <${TIER_NAMES.join('|')}> [--name NAME] [--rate-limit N] [--monthly-quota N] [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke <key_id>
  npm run keys -- rotate-webhook-secret <key_id> [--json]`;

class UsageError extends Error {}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Points the SDK at the running local stack, unless the environment names a real table. */
async function connect(): Promise<KeyStore> {
  if (!process.env.TABLE_NAME) {
    const dataDir = process.env.DATA_DIR ?? '.local';
    const path = stackInfoPath(dataDir);
    const info = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StackInfo) : undefined;
    const reachable =
      info !== undefined && isRunning(info.pid) && (await fetch(info.dynamodbEndpoint).then(() => true, () => false));
    if (!info || !reachable) {
      fail(
        `The local stack is not running for DATA_DIR=${dataDir}. Start it with "npm start" (same DATA_DIR), ` +
          'or set TABLE_NAME and AWS credentials to manage the keys of a deployed stack.',
      );
    }
    for (const name of ['AWS_PROFILE', 'AWS_SESSION_TOKEN']) delete process.env[name];
    Object.assign(process.env, localAwsEnvironment(info));
  }
  return { client: dynamo(), tableName: process.env.TABLE_NAME as string };
}

/** A key as the tool shows it: never its secret, always the limits in force. */
function describeKey(key: ApiKey) {
  const limits = limitsFor(key);
  return {
    key_id: key.keyId,
    tier: key.tier,
    name: key.name,
    rate_limit_per_minute: limits.rateLimitPerMinute,
    monthly_quota: limits.monthlyQuota,
    created_at: key.createdAt,
    revoked_at: key.revokedAt ?? null,
  };
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new UsageError(`${flag} must be a positive integer`);
  return parsed;
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tier: { type: 'string' },
      name: { type: 'string' },
      'rate-limit': { type: 'string' },
      'monthly-quota': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;

  if (command === 'create') {
    if (!isTierName(values.tier)) throw new UsageError(`--tier must be one of ${TIER_NAMES.join(', ')}`);
    const rateLimitPerMinute = positiveInt(values['rate-limit'], '--rate-limit');
    const monthlyQuota = positiveInt(values['monthly-quota'], '--monthly-quota');
    const store = await connect();
    const { apiKey, key, webhookSecret } = await createApiKey(store, {
      tier: values.tier,
      ...(values.name !== undefined && { name: values.name }),
      ...(rateLimitPerMinute !== undefined && { rateLimitPerMinute }),
      ...(monthlyQuota !== undefined && { monthlyQuota }),
    });
    if (values.json) {
      console.log(JSON.stringify({ api_key: apiKey, webhook_secret: webhookSecret, ...describeKey(key) }));
    } else {
      console.log(`Created ${key.tier} key ${key.keyId}${key.name ? ` (${key.name})` : ''}.`);
      console.log(`API key (shown once, store it now): ${apiKey}`);
      console.log(`Webhook signing secret (verifies deliveries; rotate with rotate-webhook-secret): ${webhookSecret}`);
    }
    return;
  }

  if (command === 'list') {
    const keys = await listApiKeys(await connect());
    const rows = keys.map(describeKey);
    if (values.json) console.log(JSON.stringify(rows));
    else if (rows.length === 0) console.log('No keys yet.');
    else console.table(rows);
    return;
  }

  if (command === 'revoke') {
    const keyId = rest[0];
    if (!keyId) throw new UsageError('revoke needs the key id, e.g. npm run keys -- revoke key_abc123');
    if (!(await revokeApiKey(await connect(), keyId))) fail(`No key with id ${keyId}.`);
    console.log(`Revoked ${keyId}. Requests with it are refused from now on.`);
    return;
  }

  if (command === 'rotate-webhook-secret') {
    const keyId = rest[0];
    if (!keyId) throw new UsageError('rotate-webhook-secret needs the key id, e.g. npm run keys -- rotate-webhook-secret key_abc123');
    const secret = await rotateWebhookSecret(await connect(), keyId);
    if (!secret) fail(`No key with id ${keyId}.`);
    if (values.json) console.log(JSON.stringify({ key_id: keyId, webhook_secret: secret }));
    else console.log(`New webhook signing secret of ${keyId} (deliveries are signed with it from now on, retries included): ${secret}`);
    return;
  }

  throw new UsageError(command ? `Unknown command "${command}".` : 'No command given.');
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    fail(`${(error as Error).message}\n\n${USAGE}`);
  }
  fail(`The key tool failed: ${error instanceof Error ? error.message : String(error)}`);
}
