import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/sequencer.ts';

// The suite starts Node processes by the hundred (local stacks, the key tool, the CLI, the Lambda
// emulation's functions), each compiling the same modules: V8's code cache on disk, inherited by
// every child through the environment, halves what each spends importing (a stack's imports: 0.85 ->
// 0.44 s of CPU). A quiet optimisation by design: code runs the same with or without it.
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL('./node_modules/.cache/node-compile-cache', import.meta.url));

export default defineConfig({
  test: {
    // Two groups, one after the other: every project but lambda together (three workers), then the
    // Lambda emulation alone. Inside a group the longest files start first, whatever their project
    // (./test/support/sequencer.ts), so the unit and CDK files, short and bound by the CPU, fill the
    // workers the integration files (which mostly wait) leave at the end.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          // Pure logic: a worker keeps the modules it loaded for its next file (about 10 s of the
          // CPU-bound imports spared; the files share no state but what each sets up itself).
          isolate: false,
          include: ['test/unit/**/*.test.ts'],
          // Pure logic, bound by the CPU: its short files run beside the integration files, which mostly wait.
          sequence: { groupOrder: 0 },
          // A group's projects share one pool: the same maxWorkers in each (vitest requires it).
          maxWorkers: 3,
          // Beside Chromium's renders, a test that starts worker threads (bulk files, customer code)
          // can take several times its quiet second: vitest's 5 s default would be a speed bound.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'lambda',
          include: ['test/lambda/**/*.test.ts'],
          // Alone, after every other file: it starts Chromium environments of its own on two cores.
          sequence: { groupOrder: 1 },
          // Synthesizing with bundling (once, for every file: the real `cdk synth`, which synth.test.ts
          // checks) starts in the global setup and runs beside the first group's files (each file
          // awaits it: ./test/lambda/assembly.ts; 216 s was seen on two cores shared with other work,
          // hence the hook timeout), then every function started cold in a sandbox of its own.
          globalSetup: ['test/lambda/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // One file at a time: each runs its own emulated stack, Chromium environments and all, on two cores.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          // One local stack (dynalite, s3rver, the API adapter and Chromium) serves every file.
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Three workers for the group: the fidelity file holds one for its first two minutes, two
          // integration files share the rest; then three run at once. Their tests mostly wait
          // (timeouts, receivers, restarts), so the unit and CDK files fit beside them.
          maxWorkers: 3,
        },
      },
      {
        test: {
          name: 'cdk',
          // aws-cdk-lib loaded once per worker, not once per file.
          isolate: false,
          include: ['test/cdk/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          // Each file synthesizes the stack (without bundling), bound by the CPU, in seconds.
          maxWorkers: 3,
          // Synthesizing the stack without bundling takes seconds; the real `cdk synth` (with bundling)
          // is synthesized once, by the lambda project, whose synth.test.ts checks that assembly.
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'fidelity',
          include: ['test/fidelity/**/*.test.ts'],
          // Beside the integration tests, in a worker of its own: it prints the whole corpus twice
          // (service and plain Chromium) and compares every page, mostly waiting (see maxConcurrency).
          sequence: { groupOrder: 0 },
          // A local stack of its own, with production limits (test/fidelity/service.ts).
          globalSetup: ['test/fidelity/global-setup.ts'],
          maxWorkers: 3,
          // Four cases at a time, each printed by both sides at once: a case mostly waits (the
          // reference leaves each page 3 s to finish drawing, as a person waits for print preview),
          // and four is as many as the service's render slots on two cores (max(2, 2 x cores)), so
          // no case's document waits in the service's line.
          maxConcurrency: 4,
          testTimeout: 300_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
