import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Projects run one after another (fast first), so they never compete for the two cores.
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'lambda',
          include: ['test/lambda/**/*.test.ts'],
          // After the CDK tests (it synthesizes the stack too), before the integration tests' stack starts.
          sequence: { groupOrder: 2 },
          // Synthesizing with bundling (once, for every file: the real `cdk synth`, which synth.test.ts
          // checks; 216 s was seen on two cores shared with other work), then every function started
          // cold in a sandbox of its own.
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
          sequence: { groupOrder: 3 },
          // One local stack (dynalite, s3rver, the API adapter and Chromium) serves every file.
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Chromium does the heavy lifting; two cores are best shared by two test files at a time.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'cdk',
          include: ['test/cdk/**/*.test.ts'],
          sequence: { groupOrder: 1 },
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
          // Last: it prints the whole corpus twice (service and plain Chromium) and compares every page.
          sequence: { groupOrder: 4 },
          // A local stack of its own, with production limits (test/fidelity/service.ts).
          globalSetup: ['test/fidelity/global-setup.ts'],
          // Two cases at a time, each printed by both sides at once.
          maxConcurrency: 2,
          testTimeout: 300_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
