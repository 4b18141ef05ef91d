/**
 * The `prospecta` commands as plain functions over the services. The CLI runs them against the
 * store directly, or, when a server holds the embedded store, sends them to that server over its
 * control socket (control.ts) so they run there and take effect at once.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeMember } from '../auth/member-removal.ts';
import { memberInfo } from '../auth/members.ts';
import { MAX_KEY_NAME } from '../../shared/key-name.ts';
import { PLAN_NAMES, type PlanName } from '../credits/plans.ts';
import { importPeople, PeopleFileError } from '../people/import-people.ts';
import { importRelease, type ImportProgress } from '../receita/import/importer.ts';
import { ReleaseRefused } from '../receita/import/release-files.ts';
import { downloadRelease, DownloadError, type DownloadProgress } from '../receita/download/download.ts';
import type { Config } from '../config.ts';
import type { Problem } from '../receita/import/rows.ts';
import { generateRelease } from '../seed/release-generator.ts';
import { MissingSecretError } from '../providers/workspace-keys.ts';
import type { AppServices } from '../start/bootstrap.ts';
import { seedDemo } from '../seed/demo.ts';
import { usage, type CommandName } from './usage.ts';
import { checkBackup } from '../store/embedded/backup.ts';
import { migrateDataDir } from '../store/embedded/migrate.ts';

export class UsageError extends Error {}
/** A well-formed command refused for what it found (exit 1, one line, nothing logged): not a fault. */
export class CommandRefused extends Error {}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
/**
 * The registry import this process runs, if any: two at once would interleave their writes to one
 * registry. (A second process cannot start one on the embedded store, whose lock it would need.)
 */
let importing: { dir: string; since: Date } | null = null;
/** Built beside this bundle (build.mjs); run from source, the import builds documents in its own thread. */
const DOCUMENT_WORKER = new URL('./document-worker.mjs', import.meta.url);

export type Args = Record<string, string | undefined>;

/** What a long command tells its caller while it runs (the CLI draws it on stderr). */
export type CommandEvent = { progress: ImportProgress } | { problem: Problem } | { download: DownloadProgress } | { warning: string };

interface Command {
  /** `signal`: aborted when the command line that asked for it goes away (through a server). */
  run(services: AppServices, args: Args, notify: (event: CommandEvent) => void, signal?: AbortSignal): Promise<unknown>;
  /** A command that needs no store runs from the configuration alone, never through a running server. */
  runLocal?(config: Config, args: Args, notify: (event: CommandEvent) => void): Promise<unknown>;
}

/** `generate cnpj`: a synthetic release, to try the importer. */
async function generateCnpj(args: Args) {
  const establishments = Number(args.establishments ?? 10_000);
  if (!Number.isInteger(establishments) || establishments < 1 || establishments > 100_000_000) {
    throw new UsageError('--establishments must be a whole number from 1 to 100,000,000');
  }
  const seed = Number(args.seed ?? 1);
  if (!Number.isInteger(seed)) throw new UsageError('--seed must be a whole number');
  if (args.release !== undefined && !(MONTH.test(args.release) && args.release >= '2010')) {
    throw new UsageError('--release must be a month from 2010 on, YYYY-MM');
  }
  const after = args.after === undefined ? undefined : { from: args.after, rate: Number(args.changes ?? 0.02) };
  if (after && !(MONTH.test(after.from) && after.from >= '2010' && after.from < (args.release ?? '2026-10'))) {
    throw new UsageError('--after must be a month from 2010 on, YYYY-MM, before --release');
  }
  if (after && !(after.rate > 0 && after.rate <= 1)) throw new UsageError('--changes must be a share above 0 up to 1, such as 0.02');
  if (!after && args.changes !== undefined) throw new UsageError('--changes needs --after, the release it changes');
  return generateRelease({
    dir: required(args, 'dir'),
    establishments,
    seed,
    ...(args.release ? { release: args.release } : {}),
    ...(after ? { after } : {}),
  });
}

/** `download cnpj` and the first half of `import cnpj --download`. */
async function download(config: Config, args: Args, notify: (event: CommandEvent) => void) {
  const release = args.release ?? 'latest';
  if (release !== 'latest' && !MONTH.test(release)) throw new UsageError('--release must be YYYY-MM or latest');
  try {
    return await downloadRelease({
      url: config.cnpjReleases.url,
      taxRegimesUrl: config.cnpjReleases.taxRegimesUrl,
      release,
      dir: args.dir ?? path.resolve('cnpj-releases'),
      parallel: config.cnpjReleases.parallel,
      stallMs: config.cnpjReleases.stallMs,
      onProgress: (progress) => notify({ download: progress }),
      onWarning: (warning) => notify({ warning }),
    });
  } catch (err) {
    if (err instanceof DownloadError) throw new Error(err.message);
    throw err;
  }
}

function required(args: Args, name: string): string {
  const value = args[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function plan(args: Args, fallback?: PlanName): PlanName {
  const value = args.plan ?? fallback;
  if (!value || !(PLAN_NAMES as readonly string[]).includes(value)) {
    throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
  }
  return value as PlanName;
}

async function existingWorkspace(services: AppServices, args: Args) {
  const id = required(args, 'workspace');
  const workspace = await services.workspaces.get(id);
  if (!workspace) throw new UsageError(`workspace ${id} not found`);
  return workspace;
}

/**
 * The issuer of a member's tokens: --issuer, else OAUTH_ISSUER of the process that runs the
 * command (the server's, when the CLI reaches a running server), the issuer whose tokens it accepts.
 */
function issuer(services: AppServices, args: Args): string {
  const value = args.issuer ?? services.config.oauth.issuer;
  if (!value) throw new UsageError('--issuer is required when OAUTH_ISSUER is unset');
  return value;
}

/** A provider that takes a key: keyless sources have nothing to store. */
function keyedProvider(services: AppServices, args: Args): string {
  const id = required(args, 'provider');
  const keyed: string[] = services.providers.all.filter((p) => p.keyVariable).map((p) => p.id);
  if (!keyed.includes(id)) throw new UsageError(`--provider must be one of ${keyed.join(', ')}`);
  return id;
}

/** `import cnpj`'s work, once it is the only import running. */
async function importCnpj(services: AppServices, args: Args, notify: (event: CommandEvent) => void, signal?: AbortSignal) {
  let dir: string;
  let release = args.release;
  if (args.download !== undefined) {
    // Downloads into DIR/YYYY-MM (DIR: ./cnpj-releases by default), then imports that folder.
    const downloaded = await download(services.config, args, notify);
    dir = downloaded.dir;
    release = downloaded.release;
  } else {
    dir = required(args, 'dir');
    if (release !== undefined && !MONTH.test(release)) throw new UsageError('--release must be a month, YYYY-MM');
  }
  try {
    const summary = await importRelease(services.store, {
      dir,
      ...(release ? { release } : {}),
      ...(args.force !== undefined ? { force: true } : {}),
      ...(existsSync(fileURLToPath(DOCUMENT_WORKER)) ? { documentWorker: DOCUMENT_WORKER } : {}),
      onProgress: (progress) => notify({ progress }),
      onProblem: (problem) => notify({ problem }),
      ...(signal ? { signal } : {}),
    });
    return summary;
  } catch (err) {
    if (err instanceof ReleaseRefused) throw new UsageError(err.message);
    if (signal?.aborted) throw new CommandRefused('the import stopped, its command line having gone away: run it again to resume where it stopped');
    throw err;
  } finally {
    services.companies.changed();
  }
}

export const commands: Record<CommandName, Command> = {
  'workspace create': {
    async run(services, args) {
      const name = required(args, 'name');
      const workspace = await services.workspaces.create(name, plan(args, 'trial'));
      await services.credits.flushPending(workspace);
      const { apiKey } = await services.keys.create(workspace._id);
      return { workspaceId: workspace._id, apiKey };
    },
  },
  'workspace list': {
    async run(services) {
      const docs = await services.workspaces.collection
        .find({}, { sort: { createdAt: 1 }, projection: { name: 1, plan: 1, balance: 1, createdAt: 1 } })
        .toArray();
      return {
        workspaces: docs.map((w) => ({ workspaceId: w._id, name: w.name, plan: w.plan.name, balance: w.balance, createdAt: w.createdAt.toISOString() })),
      };
    },
  },
  'key create': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      const name = typeof args.name === 'string' ? args.name : undefined;
      if (name !== undefined && name.trim().length > MAX_KEY_NAME) throw new UsageError(`--name has at most ${MAX_KEY_NAME} characters`);
      return services.keys.create(workspace._id, undefined, name);
    },
  },
  'key list': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      return { keys: await services.keys.list(workspace._id) };
    },
  },
  'key revoke': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      const keyId = required(args, 'key');
      const revocation = await services.keys.revoke(workspace._id, keyId);
      if (revocation.outcome === 'not_found') throw new UsageError(`key ${keyId} not found in workspace ${workspace._id}`);
      // Said, as the dashboard's 409 says it: a script revoking the wrong key twice should notice.
      if (revocation.outcome === 'already_revoked') throw new CommandRefused(`key ${keyId} was already revoked, at ${revocation.revokedAt.toISOString()}`);
      return { keyId, revoked: true, revokedAt: revocation.revokedAt.toISOString() };
    },
  },
  'dashboard link': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      return services.signInLinks.issue(workspace._id);
    },
  },
  'member add': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      const subject = required(args, 'subject');
      const iss = issuer(services, args);
      const result = await services.members.add(iss, subject, workspace._id);
      if ('alreadyIn' in result) {
        throw new UsageError(`subject ${subject} of ${iss} is a member of workspace ${result.alreadyIn}; remove it there first`);
      }
      return memberInfo(result.added);
    },
  },
  'member list': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      return { workspaceId: workspace._id, members: await services.members.list(workspace._id) };
    },
  },
  'member remove': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      const subject = required(args, 'subject');
      const iss = issuer(services, args);
      const removal = await removeMember(services, iss, subject, workspace._id);
      if (!removal) throw new UsageError(`subject ${subject} of ${iss} is not a member of workspace ${workspace._id}`);
      return { workspaceId: workspace._id, issuer: iss, subject, removed: true, revokedKeys: removal.revokedKeys };
    },
  },
  'plan set': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      // A trial that has ended loses its credits first, as its next use would have (expiry is
      // lazy): the new plan does not bring them back.
      await services.credits.expireTrialIfDue(workspace);
      const updated = await services.workspaces.setPlan(workspace._id, plan(args));
      return { workspaceId: workspace._id, plan: updated!.plan.name, expiresAt: updated!.plan.expiresAt };
    },
  },
  'credits grant': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      const amount = Number(required(args, 'amount'));
      if (!Number.isInteger(amount) || amount <= 0 || amount > 1e9) {
        throw new UsageError('--amount must be a positive whole number of credits');
      }
      await services.credits.credit(workspace._id, amount, 'grant', args.note ?? 'Credits granted');
      const view = await services.credits.view(workspace._id);
      return { workspaceId: workspace._id, granted: amount, balance: view!.balance };
    },
  },
  'import cnpj': {
    async run(services, args, notify, signal) {
      if (importing) {
        throw new CommandRefused(`an import is already running (of ${importing.dir}, since ${importing.since.toISOString()}): wait for it to finish, or stop its command`);
      }
      importing = { dir: args.dir ?? 'a download', since: new Date() };
      try {
        return await importCnpj(services, args, notify, signal);
      } finally {
        importing = null;
      }
    },
  },
  'download cnpj': {
    run: (services, args, notify) => download(services.config, args, notify),
    runLocal: download,
  },
  'import people': {
    async run(services, args, notify) {
      const workspace = await existingWorkspace(services, args);
      const file = required(args, 'file');
      const list = args.list ?? path.basename(file).replace(/\.[^.]+$/, '');
      try {
        return await importPeople(services.people, {
          workspaceId: workspace._id,
          file,
          list,
          onProblem: (problem) => notify({ problem }),
        });
      } catch (err) {
        if (err instanceof PeopleFileError) throw new UsageError(err.message);
        throw err;
      }
    },
  },
  'provider-key set': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      const provider = keyedProvider(services, args);
      const key = required(args, 'key').trim();
      if (key.length < 8 || /\s/.test(key)) {
        const looksLike = services.providers.all.find((p) => p.id === provider)?.keyLooksLike;
        throw new UsageError(`--key does not look like ${looksLike ?? 'an API key'}`);
      }
      try {
        const stored = await services.providerKeys.set(workspace._id, provider, key);
        return { workspaceId: workspace._id, ...stored };
      } catch (err) {
        if (err instanceof MissingSecretError) throw new UsageError(err.message);
        throw err;
      }
    },
  },
  'provider-key list': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      return { workspaceId: workspace._id, keys: await services.providerKeys.list(workspace._id) };
    },
  },
  'provider-key delete': {
    async run(services, args) {
      const workspace = await existingWorkspace(services, args);
      const provider = keyedProvider(services, args);
      if (!(await services.providerKeys.remove(workspace._id, provider))) {
        throw new UsageError(`workspace ${workspace._id} has no key for ${provider}`);
      }
      return { workspaceId: workspace._id, provider, deleted: true };
    },
  },
  'generate cnpj': {
    // Writes files under --dir and nothing else: it opens no store (which would create an empty
    // one in ./data when DATA_DIR is unset) and never goes through a running server.
    run: (_services, args) => generateCnpj(args),
    runLocal: (_config, args) => generateCnpj(args),
  },
  'seed demo': {
    async run(services, _args, notify) {
      const seeded = await seedDemo(services, (progress) => notify({ progress }));
      if (seeded.created) return seeded;
      // Nothing new was loaded: say so, rather than counts of zero.
      const { workspaceId, apiKey } = seeded;
      return { workspaceId, apiKey, created: false, note: 'The demo data was already loaded; this is a new API key for its workspace.' };
    },
  },
  backup: {
    async run(services, args) {
      const out = required(args, 'out');
      if (!services.store.backup) throw new UsageError('backup copies the embedded store; with MONGODB_URI, use mongodump');
      if (existsSync(out)) throw new UsageError(`${out} exists: choose a new file, so no backup is overwritten`);
      try {
        const written = await services.store.backup(out);
        // Counted as `restore` will count them, from the file itself (the store also knows
        // collections that hold nothing, which a backup does not carry): the two always agree,
        // and the backup is known to read back before anyone relies on it.
        const { collections, documents } = await checkBackup(out);
        return { ...written, collections, documents };
      } catch (err) {
        // The temporary file beside it, or the name itself since the check: never followed or replaced.
        const { code, path: at, dest } = err as NodeJS.ErrnoException & { dest?: string };
        if (code === 'EEXIST') throw new CommandRefused(`${dest ?? at ?? out} exists (a file, or a symlink): nothing was written. Remove it, or choose another --out`);
        // The first file made there, beside it: its folder is missing, or is a file.
        if ((code === 'ENOENT' || code === 'ENOTDIR') && at === `${out}.tmp`) throw new CommandRefused(`${path.dirname(out)} is not a folder: nothing was written. Create it, or choose another --out`);
        throw err;
      }
    },
  },
  migrate: {
    run() {
      return Promise.reject(new UsageError('migrate runs from the command line'));
    },
    async runLocal(config) {
      if (config.mongodbUri) throw new UsageError('migrate converts the embedded store; with MONGODB_URI there is nothing to convert');
      return migrateDataDir(config.dataDir);
    },
  },
  restore: {
    run() {
      // The CLI runs it without opening the store (cli/main.ts); a server never does.
      return Promise.reject(new UsageError('restore needs the store closed: stop the server, then run it from the command line'));
    },
  },
};

export { usage };
