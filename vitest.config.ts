import { configDefaults, defineConfig } from 'vitest/config';

/** What every test file gets, in either project below. */
const EACH_FILE = {
  // Stops the processes and removes the folders each test (or file) started.
  setupFiles: ['test/helpers/setup.ts'],
  // Hang detectors, not speed limits (speed is for bench/): a test that spawns a dozen processes
  // took 9 s beside a CPU-heavy benchmark, too close to the former 20 s. Waits inside tests have
  // their own deadlines (eventually(), 10 s by default) and fail sooner, saying what they awaited.
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

/**
 * Files that need a process where nothing else has run: they check what importing or starting
 * something does to the process (a patch applied once, at start-up).
 */
const FRESH_PROCESS = ['test/server/outbound/bottleneck-yield.test.ts'];

export default defineConfig({
  test: {
    // Run once for the whole run (the projects below do not repeat it), and what it provides reaches every file.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Two cores: keep workers few so process-spawning tests are not starved.
    maxWorkers: 2,
    projects: [
      {
        // A worker runs its files one after another in one process, importing the server's modules
        // once rather than once per file (a process per file spent 172 s of CI's run on imports).
        test: { ...EACH_FILE, name: 'shared', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...FRESH_PROCESS], isolate: false },
      },
      { test: { ...EACH_FILE, name: 'fresh', include: FRESH_PROCESS, isolate: true } },
    ],
  },
});
