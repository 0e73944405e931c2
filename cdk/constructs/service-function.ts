/**
 * One Lambda function of the service, built from functions/<name>.ts: bundled locally by esbuild
 * (no Docker), with its own log group and its own role that starts with nothing but permission to
 * write its own logs. Everything else a function may do is granted by the stack, from its profile.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Stack, type Duration, type RemovalPolicy, type Size } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, CfnFunction, Runtime, Tracing, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { FONT_BUNDLE_PATHS, locateBundledFile } from '#lib/render/fonts.ts';
import { PDFJS_BUNDLE_PATHS } from '#lib/render/pdfjs-files.ts';
import { SITE_ASSETS, SITE_ASSETS_DIR } from '#lib/site/assets.ts';
import { CREATE_REQUIRE_BANNER } from '../bundling.ts';
import { LAYER_PACKAGES } from './chromium-layer.ts';

/** The one runtime of every function and of the layer: the project's pinned Node major. */
export const RUNTIME = Runtime.NODEJS_24_X;


export interface ServiceFunctionProps {
  /** The file name in functions/, e.g. `generate`. */
  readonly name: string;
  readonly projectRoot: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  /** Runs Chromium: keeps @sparticuz/chromium out of the bundle (the layer provides it). */
  readonly chromium: boolean;
  /**
   * Reads a secret at cold start (lib/secrets.ts). Only then does it carry the Secrets Manager
   * client: elsewhere that code path is never taken (no `<NAME>_ARN` in its environment).
   */
  readonly readsSecrets?: boolean;
  /** Serves the site's files: they are copied beside the bundle, where lib/site/pages.ts reads them. */
  readonly siteAssets?: boolean;
  readonly layers?: ILayerVersion[];
  /** /tmp size; Lambda's default is 512 MiB. */
  readonly ephemeralStorage?: Size;
  /** Reserved concurrency; none by default, which a new account needs (cdk/constructs/concurrency.ts). */
  readonly reservedConcurrentExecutions?: number;
  readonly environment: Record<string, string>;
  readonly tracing: boolean;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * Shell commands that copy the service's fonts into a bundle at `node_modules/<package>/<file>`,
 * where lib/render/fonts.ts looks for them on Lambda (/var/task/node_modules): Chromium renders
 * with exactly the fonts it uses locally. Only the listed files travel, not whole font packages.
 */
export function fontCopyCommands(projectRoot: string, outputDir: string): string[] {
  // pdf.js's two scripts too, which draw PDF thumbnails in the browser (lib/render/thumbnail.ts).
  return [...FONT_BUNDLE_PATHS, ...PDFJS_BUNDLE_PATHS].map((path) => {
    const source = locateBundledFile(path, [projectRoot]);
    if (!source) throw new Error(`File ${path} is not installed; run npm ci first`);
    const target = join(outputDir, 'node_modules', path);
    return `mkdir -p '${dirname(target)}' && cp '${source}' '${target}'`;
  });
}

/** Shell commands that copy the site's files (lib/site/assets.ts) into the bundle's `site-assets/`. */
export function siteAssetCopyCommands(projectRoot: string, outputDir: string): string[] {
  return Object.entries(SITE_ASSETS).map(([name, { source }]) => {
    const from = join(projectRoot, source);
    if (!existsSync(from)) throw new Error(`Site asset ${source} is missing; run npm ci first`);
    return `mkdir -p '${join(outputDir, SITE_ASSETS_DIR)}' && cp '${from}' '${join(outputDir, SITE_ASSETS_DIR, name)}'`;
  });
}

/** The SDK package lib/secrets.ts loads, only where a secret is read. */
export const SECRETS_MANAGER_CLIENT = '@aws-sdk/client-secrets-manager';

/** `generate` -> `GenerateFunction`: the construct id and the template's logical id. */
export function functionId(name: string): string {
  return `${name.charAt(0).toUpperCase()}${name.slice(1)}Function`;
}

export function createServiceFunction(scope: Construct, props: ServiceFunctionProps): NodejsFunction {
  const id = functionId(props.name);
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: props.logRetention,
    removalPolicy: props.removalPolicy,
  });
  const role = new Role(scope, `${id}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `Runs the ${props.name} function of ${Stack.of(scope).stackName}`,
  });
  // Instead of AWSLambdaBasicExecutionRole (logs:* on every log group): its own group only. The
  // group exists before the function, so CreateLogGroup is not needed.
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
  );

  const fn = new NodejsFunction(scope, id, {
    description: props.description,
    entry: join(props.projectRoot, 'functions', `${props.name}.ts`),
    handler: 'handler',
    projectRoot: props.projectRoot,
    depsLockFilePath: join(props.projectRoot, 'package-lock.json'),
    runtime: RUNTIME,
    // @sparticuz/chromium ships an x86_64 browser.
    architecture: Architecture.X86_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    ephemeralStorageSize: props.ephemeralStorage,
    reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    layers: props.layers,
    environment: props.environment,
    // DISABLED rather than PASS_THROUGH: with tracing off no X-Ray permission is granted at all.
    tracing: props.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
    role,
    logGroup,
    bundling: {
      format: OutputFormat.ESM,
      mainFields: ['module', 'main'],
      banner: CREATE_REQUIRE_BANNER,
      // The AWS SDK is bundled too, at the versions the tests ran against, instead of whatever
      // version the runtime happens to carry; only what the layer carries stays outside (see ChromiumLayer).
      // A function that reads no secret leaves the Secrets Manager client out: the import that loads
      // it runs only with a `<NAME>_ARN` variable, which such a function is never given (and Lambda's
      // Node runtime carries the SDK should it ever run).
      externalModules: [...(props.chromium ? LAYER_PACKAGES : []), ...(props.readsSecrets ? [] : [SECRETS_MANAGER_CLIENT])],
      minify: true,
      keepNames: true,
      sourceMap: false,
      forceDockerBundling: false,
      commandHooks: {
        beforeBundling: () => [],
        beforeInstall: () => [],
        afterBundling: (_inputDir: string, outputDir: string) => [
          // The customer-code worker, where this function starts one (cdk/bundling.ts decides).
          `'${process.execPath}' '${join(props.projectRoot, 'cdk', 'bundling.ts')}' '${outputDir}'`,
          ...(props.chromium ? fontCopyCommands(props.projectRoot, outputDir) : []),
          ...(props.siteAssets ? siteAssetCopyCommands(props.projectRoot, outputDir) : []),
        ],
      },
    },
  });
  // A stable logical id (`GenerateFunction`): readable templates, and the id `sam local invoke` takes.
  (fn.node.defaultChild as CfnFunction).overrideLogicalId(id);
  return fn;
}
