/**
 * The key tool: `npm run keys -- create|list|revoke|rotate|change-tier|rotate-webhook-secret|show-webhook-secret`.
 *
 * Against AWS it uses the same variables as the Lambda functions (TABLE_NAME plus the usual AWS
 * credentials and region). Without TABLE_NAME it manages the keys of the local stack running on
 * $DATA_DIR (default .local), found through the stack.json file the stack writes when it starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  changeTier,
  createApiKey,
  credentialsOfKey,
  KeyChangedError,
  KeyRevokedError,
  limitsFor,
  listApiKeys,
  MAX_ROTATION_OVERLAP_SECONDS,
  revokeApiKey,
  rotateApiKey,
  rotateWebhookSecret,
  webhookSecretsOf,
  type ApiKey,
  type KeyStore,
  type WebhookSecrets,
} from '#lib/accounts/keys.ts';
import { isTierName, TIER_NAMES } from '#lib/accounts/tiers.ts';
import { dynamo } from '#lib/aws/clients.ts';
import { localAwsEnvironment, stackInfoPath, type StackInfo } from '#lib/local/stack-info.ts';

/** How long a replaced API key or webhook secret keeps working when --overlap is not given. */
const DEFAULT_OVERLAP = '24h';
const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

const USAGE = `Usage:
  npm run keys -- create --tier <${TIER_NAMES.join('|')}> [--name NAME] [--rate-limit N] [--monthly-quota N] [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke <key_id>
  npm run keys -- rotate <key_id> [--overlap DURATION] [--json]
  npm run keys -- change-tier <key_id> --tier <${TIER_NAMES.join('|')}> [--rate-limit N] [--monthly-quota N] [--json]
  npm run keys -- rotate-webhook-secret <key_id> [--overlap DURATION] [--json]
  npm run keys -- show-webhook-secret <key_id> [--json]

DURATION: a whole number with s, m, h or d (e.g. 90s, 30m, 24h, 7d), 0 for none; at most 30d.
Default ${DEFAULT_OVERLAP}: the replaced key (or secret) keeps working that long, then stops.`;

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

/** When the key's replaced plaintext keys stop, if any still work beside the newest. */
function retiringAt(credentials: readonly { retiresAt?: string }[], now = Date.now()): string | null {
  const ends = credentials.map((c) => c.retiresAt).filter((end): end is string => end !== undefined && Date.parse(end) > now);
  return ends.length ? ends.sort().at(-1)! : null;
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new UsageError(`${flag} must be a positive integer`);
  return parsed;
}

/** `--overlap` in seconds: `0`, or a whole number with a unit (s, m, h, d), at most 30 days. */
function overlapSeconds(value: string | undefined): number {
  const match = /^(\d+)([smhd])$|^(0)$/.exec(value ?? DEFAULT_OVERLAP);
  const seconds = match ? (match[3] ? 0 : Number(match[1]) * UNIT_SECONDS[match[2]!]!) : NaN;
  if (!(seconds >= 0 && seconds <= MAX_ROTATION_OVERLAP_SECONDS)) {
    throw new UsageError('--overlap must be 0 or a whole number with s, m, h or d (e.g. 30m, 24h, 7d), at most 30d');
  }
  return seconds;
}

function keyIdArgument(rest: string[], command: string): string {
  const keyId = rest[0];
  if (!keyId) throw new UsageError(`${command} needs the key id, e.g. npm run keys -- ${command} key_abc123`);
  return keyId;
}

function describeSecrets(keyId: string, secrets: WebhookSecrets) {
  return { key_id: keyId, webhook_secret: secrets.current, retiring_webhook_secrets: secrets.retiring.map((entry) => ({ webhook_secret: entry.secret, retires_at: entry.retiresAt })) };
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
      overlap: { type: 'string' },
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
    const store = await connect();
    const keys = await listApiKeys(store);
    const rows = await Promise.all(
      keys.map(async (key) => ({ ...describeKey(key), previous_key_retires_at: retiringAt((await credentialsOfKey(store, key.keyId)) ?? []) })),
    );
    if (values.json) console.log(JSON.stringify(rows));
    else if (rows.length === 0) console.log('No keys yet.');
    else console.table(rows);
    return;
  }

  if (command === 'revoke') {
    const keyId = keyIdArgument(rest, 'revoke');
    if (!(await revokeApiKey(await connect(), keyId))) fail(`No key with id ${keyId}.`);
    console.log(`Revoked ${keyId}. Requests with any of its API keys are refused from now on.`);
    return;
  }

  if (command === 'rotate') {
    const keyId = keyIdArgument(rest, 'rotate');
    const overlap = overlapSeconds(values.overlap);
    const rotation = await rotateApiKey(await connect(), keyId, { overlapSeconds: overlap });
    if (!rotation) fail(`No key with id ${keyId}.`);
    if (values.json) {
      console.log(JSON.stringify({ api_key: rotation.apiKey, ...describeKey(rotation.key), previous_keys_retire_at: rotation.previousKeysRetireAt }));
    } else {
      console.log(`New API key of ${keyId} (shown once, store it now): ${rotation.apiKey}`);
      console.log(
        overlap === 0
          ? 'Its earlier API keys are refused from now on.'
          : `Its earlier API keys keep working until ${rotation.previousKeysRetireAt}, then are refused. Move every client to the new key before then.`,
      );
    }
    return;
  }

  if (command === 'change-tier') {
    const keyId = keyIdArgument(rest, 'change-tier');
    if (!isTierName(values.tier)) throw new UsageError(`--tier must be one of ${TIER_NAMES.join(', ')}`);
    const rateLimitPerMinute = positiveInt(values['rate-limit'], '--rate-limit');
    const monthlyQuota = positiveInt(values['monthly-quota'], '--monthly-quota');
    const key = await changeTier(await connect(), keyId, {
      tier: values.tier,
      ...(rateLimitPerMinute !== undefined && { rateLimitPerMinute }),
      ...(monthlyQuota !== undefined && { monthlyQuota }),
    });
    if (!key) fail(`No key with id ${keyId}.`);
    const described = describeKey(key);
    if (values.json) console.log(JSON.stringify(described));
    else {
      console.log(
        `${keyId} is now ${key.tier}: ${described.rate_limit_per_minute} requests per minute, ${described.monthly_quota} PDFs per month, ` +
          'from its next request on (PDFs already made keep their link validity).',
      );
    }
    return;
  }

  if (command === 'rotate-webhook-secret') {
    const keyId = keyIdArgument(rest, 'rotate-webhook-secret');
    const overlap = overlapSeconds(values.overlap);
    const secrets = await rotateWebhookSecret(await connect(), keyId, { overlapSeconds: overlap });
    if (!secrets) fail(`No key with id ${keyId}.`);
    if (values.json) console.log(JSON.stringify(describeSecrets(keyId, secrets)));
    else {
      console.log(`New webhook signing secret of ${keyId}: ${secrets.current}`);
      for (const entry of secrets.retiring) console.log(`Also signing until ${entry.retiresAt} (each delivery carries both signatures): ${entry.secret}`);
      if (secrets.retiring.length === 0) console.log('Deliveries from now on, retries included, are signed with the new secret only.');
    }
    return;
  }

  if (command === 'show-webhook-secret') {
    const keyId = keyIdArgument(rest, 'show-webhook-secret');
    const secrets = await webhookSecretsOf(await connect(), keyId);
    if (!secrets) fail(`No key with id ${keyId}.`);
    if (values.json) console.log(JSON.stringify(describeSecrets(keyId, secrets)));
    else {
      console.log(`Webhook signing secret of ${keyId}: ${secrets.current}`);
      for (const entry of secrets.retiring) console.log(`Replaced secret, still signing until ${entry.retiresAt}: ${entry.secret}`);
    }
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
  if (error instanceof KeyRevokedError || error instanceof KeyChangedError) fail(error.message);
  fail(`The key tool failed: ${error instanceof Error ? error.message : String(error)}`);
}
