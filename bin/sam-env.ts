/**
 * `npm run sam-env`: writes env.json for `sam local invoke --env-vars env.json`, complete for every
 * function of the stack, from a deployed stack's outputs.
 *
 * SAM runs a function of the synthesized template in a Lambda container, but it cannot resolve the
 * template's references (`{ Ref: ... }`, `Fn::GetAtt`): a function would start without its table,
 * bucket, queue, key or the functions it invokes. So each function's environment is read from the
 * template (the stack as `npx cdk synth` makes it, with the same `-c` switches), its literal values
 * kept, and each reference replaced by the value of the stack output that names the same thing
 * (cdk/stack.ts gives an output for every one; test/cdk/sam-env.test.ts fails otherwise).
 *
 *   npm run sam-env                                  # stack PdfApi, in your AWS region, to env.json
 *   npm run sam-env -- --stack PdfApi --out env.json --outputs-file cdk-outputs.json -c renderReservedConcurrency=10
 *
 * `--outputs-file` reads what `npx cdk deploy --outputs-file cdk-outputs.json` wrote instead of
 * asking CloudFormation; `-c` takes the switches the stack was deployed with (a provisioned render
 * function is invoked by its alias). env.json holds names and ARNs, no secret: functions read the
 * link-signing secret from Secrets Manager with your credentials, as in AWS.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { STACK_NAME } from '../cdk/stack.ts';
import { synthesizedTemplate, type StackTemplate, type TemplateValue } from '../cdk/template.ts';

/** A function's environment as the template writes it: literals, and references to resolve. */
export function functionEnvironments(template: StackTemplate): Record<string, Record<string, TemplateValue>> {
  return Object.fromEntries(
    Object.entries(template.Resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
      .map(([id, resource]) => [id, (resource.Properties?.Environment?.Variables ?? {}) as Record<string, TemplateValue>]),
  );
}

const isLiteral = (value: TemplateValue): value is string | number | boolean => typeof value !== 'object';
const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The output whose value is this reference, if the stack has one. */
export function outputFor(template: StackTemplate, value: TemplateValue): string | undefined {
  return Object.entries(template.Outputs ?? {}).find(([, output]) => sameValue(output.Value, value))?.[0];
}

/** Every variable of every function that no output resolves: `Function.VARIABLE` names. */
export function unresolvable(template: StackTemplate): string[] {
  return Object.entries(functionEnvironments(template)).flatMap(([id, variables]) =>
    Object.entries(variables)
      .filter(([, value]) => !isLiteral(value) && !outputFor(template, value))
      .map(([name]) => `${id}.${name}`),
  );
}

/**
 * env.json: per function (by its logical id, which `sam local invoke` takes), every variable of its
 * environment with its deployed value. Throws naming what the outputs do not give.
 */
export function samEnvironment(template: StackTemplate, outputs: Readonly<Record<string, string>>): Record<string, Record<string, string>> {
  /** Output (or, with none, function) -> the variables it should have given. */
  const missing = new Map<string, Set<string>>();
  const environment = Object.fromEntries(
    Object.entries(functionEnvironments(template)).map(([id, variables]) => [
      id,
      Object.fromEntries(
        Object.entries(variables).map(([name, value]) => {
          if (isLiteral(value)) return [name, String(value)];
          const output = outputFor(template, value);
          const deployed = output === undefined ? undefined : outputs[output];
          if (deployed === undefined) missing.set(output ?? `no output for ${id}`, (missing.get(output ?? `no output for ${id}`) ?? new Set()).add(name));
          return [name, deployed ?? ''];
        }),
      ),
    ]),
  );
  if (missing.size > 0) {
    const lacking = [...missing].map(([output, names]) => `${output} (${[...names].join(', ')})`);
    throw new Error(`The deployed stack's outputs lack ${lacking.join(', ')}: deploy it from this checkout (npx cdk deploy) first.`);
  }
  return environment;
}

/** A deployed stack's outputs, from CloudFormation (your credentials and region, as the AWS CLI finds them). */
async function deployedOutputs(stackName: string): Promise<Record<string, string>> {
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient({});
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    return Object.fromEntries((Stacks?.[0]?.Outputs ?? []).map((output) => [output.OutputKey!, output.OutputValue ?? '']));
  } finally {
    client.destroy();
  }
}

/** What `cdk deploy --outputs-file` writes: `{ "<stack>": { "<output>": "<value>" } }`. */
function outputsFromFile(path: string, stackName: string): Record<string, string> {
  const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, Record<string, string>>;
  const outputs = file[stackName];
  if (!outputs) throw new Error(`${path} has no outputs of a stack named ${stackName} (it has ${Object.keys(file).join(', ') || 'none'})`);
  return outputs;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      stack: { type: 'string', default: STACK_NAME },
      out: { type: 'string', default: 'env.json' },
      'outputs-file': { type: 'string' },
      context: { type: 'string', short: 'c', multiple: true, default: [] },
    },
  });
  try {
    const context = Object.fromEntries(
      values.context.map((pair) => {
        const at = pair.indexOf('=');
        if (at < 1) throw new Error(`-c takes name=value, got ${JSON.stringify(pair)}`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
    );
    const outputs = values['outputs-file'] ? outputsFromFile(values['outputs-file'], values.stack) : await deployedOutputs(values.stack);
    const environment = samEnvironment(synthesizedTemplate(context), outputs);
    writeFileSync(values.out, JSON.stringify(environment, null, 2) + '\n');
    console.log(`wrote ${values.out}: the environment of ${Object.keys(environment).length} functions of ${values.stack}`);
  } catch (error) {
    console.error(`sam-env: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
