import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Stops the processes and removes the folders each test (or file) started.
    setupFiles: ['test/helpers/setup.ts'],
    // Two cores: keep workers few so process-spawning tests are not starved.
    maxWorkers: 2,
    // Hang detectors, not speed limits (speed is for bench/): a test that spawns a dozen processes
    // took 9 s beside a CPU-heavy benchmark, too close to the former 20 s. Waits inside tests have
    // their own deadlines (eventually(), 10 s by default) and fail sooner, saying what they awaited.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
