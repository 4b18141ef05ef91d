/**
 * `prospecta import cnpj` as the kill tests run it: two synthetic releases of the same size
 * (2026-09, then 2026-10), an import to its end, and an import killed with SIGKILL once its
 * progress (stderr) says a given thing.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateRelease } from '../../server/seed/release-generator.ts';
import { runCli, track } from './processes.ts';
import { tempDir } from './temp-dir.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A folder holding the releases 2026-09 and 2026-10 of `establishments` each. */
export async function releasePair(name: string, establishments: number): Promise<string> {
  const releases = await tempDir(name);
  for (const [release, seed] of [['2026-09', 9], ['2026-10', 10]] as const) {
    await generateRelease({ dir: path.join(releases, release), establishments, seed, release });
  }
  return releases;
}

export const importOf = (releases: string, dataDir: string, release: string) =>
  runCli(['import', 'cnpj', '--dir', path.join(releases, release)], { DATA_DIR: dataDir });

/** Starts the import and kills it with SIGKILL once its progress matches `line`; resolves when it is gone. */
export function importKilledAt(releases: string, dataDir: string, release: string, line: RegExp): Promise<{ killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, ['bin/prospecta.mjs', 'import', 'cnpj', '--dir', path.join(releases, release)], {
        cwd: root,
        env: { ...process.env, LOG_LEVEL: 'silent', DATA_DIR: dataDir },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    let progress = '';
    let killed = false;
    child.stderr!.on('data', (d) => {
      progress += d;
      if (!killed && line.test(progress)) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('close', () => resolve({ killed }));
  });
}
