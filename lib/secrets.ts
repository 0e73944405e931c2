/**
 * Secrets in AWS: the stack hands a function `<NAME>_ARN` (a Secrets Manager secret) rather than the
 * value, so the value never shows in the function's configuration. It is read once per cold start,
 * during Lambda's init phase, and put where the settings read it (`process.env.<NAME>`), so every
 * setting stays a plain synchronous read. Without `<NAME>_ARN` (local stack, tests) nothing happens.
 */

/**
 * Resolves each named secret whose value is not already set but whose `<NAME>_ARN` is.
 *
 * @param names environment variable names, e.g. `LINK_SIGNING_SECRET`
 * @param env the environment to read and fill (the process's by default)
 */
export async function resolveSecretArns(names: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const pending = names.filter((name) => !env[name] && env[`${name}_ARN`]);
  if (pending.length === 0) return;
  // Loaded only where a secret is to be read: the local stack and the tests never pay for it.
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({});
  try {
    await Promise.all(
      pending.map(async (name) => {
        const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: env[`${name}_ARN`] }));
        if (!SecretString) throw new Error(`The secret named by ${name}_ARN has no string value`);
        env[name] = SecretString;
      }),
    );
  } finally {
    client.destroy();
  }
}
