import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One local stack (dynalite, s3rver, the API adapter and Chromium) serves every file.
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Chromium does the heavy lifting; two cores are best shared by two test files at a time.
          maxWorkers: 2,
        },
      },
    ],
  },
});
