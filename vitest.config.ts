import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Stops the processes and removes the folders each test (or file) started.
    setupFiles: ['test/helpers/setup.ts'],
    // Two cores: keep workers few so process-spawning tests are not starved.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
