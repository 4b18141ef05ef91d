/**
 * `npx prospecta <command>`: JSON on stdout, errors on stderr with a non-zero exit code.
 * When a running server holds the embedded store, the command is sent to it over the control
 * socket instead of being refused.
 *
 * Only what parsing needs is imported up front: `--help`, an unknown command or a bad option
 * answer without loading the server (a second or more on a busy machine); a command loads
 * what it runs on (the build splits these imports into chunks of their own).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ControlReply, ControlRequest } from './control.ts';
import { isCommand, usage } from './usage.ts';

function fail(message: string, code = 1): never {
  process.stderr.write(`prospecta: ${message}\n`);
  process.exit(code);
}

/** node:util's parseArgs errors, said the way the rest of the CLI speaks. */
function argumentProblem(err: unknown): string | null {
  const { code, message } = err as { code?: string; message?: string };
  const option = /'(--?[\w-]+)/.exec(message ?? '')?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return `${option ?? 'an option'} needs a value; for a value that starts with a dash, write ${option ?? '--option'}=VALUE`;
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? ''}`.trim();
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']+)'/.exec(message ?? '')?.[1] ?? ''}: values follow their option (--name VALUE)`.trim();
    default:
      return null;
  }
}

function parse(argv: string[]): ControlRequest {
  try {
    return parseCommand(argv);
  } catch (err) {
    const problem = argumentProblem(err);
    if (problem) fail(`${problem}\n${usage()}`, 2);
    throw err;
  }
}

function parseCommand(argv: string[]): ControlRequest {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      workspace: { type: 'string' },
      key: { type: 'string' },
      amount: { type: 'string' },
      note: { type: 'string' },
      dir: { type: 'string' },
      release: { type: 'string' },
      establishments: { type: 'string' },
      seed: { type: 'string' },
      after: { type: 'string' },
      changes: { type: 'string' },
      file: { type: 'string' },
      list: { type: 'string' },
      provider: { type: 'string' },
      subject: { type: 'string' },
      issuer: { type: 'string' },
      out: { type: 'string' },
      from: { type: 'string' },
      download: { type: 'boolean' },
      force: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals.slice(0, 2).join(' ');
  if (values.help) {
    process.stdout.write(`${usage()}\n`);
    process.exit(0);
  }
  if (!isCommand(command)) fail(`${command ? `unknown command "${command}"\n` : ''}${usage()}`, 2);
  const { help: _help, ...args } = values;
  // A running server may execute the command, from its own working directory.
  if (args.dir) args.dir = path.resolve(args.dir);
  if (args.file) args.file = path.resolve(args.file);
  if (args.out) args.out = path.resolve(args.out);
  if (args.from) args.from = path.resolve(args.from);
  return { command, args: args as Record<string, string | undefined> };
}

/** Commands that read a secret from stdin when its option is absent, so it stays out of shell history. */
const SECRET_FROM_STDIN: Record<string, string> = { 'provider-key set': 'key' };

/** The first line of stdin; on a terminal, asked for on stderr. Read here, before a server may run the command. */
async function readSecretLine(option: string): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write(`--${option} not given: paste it and press Enter: `);
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n') || text.length > 4096) break;
  }
  process.stdin.destroy();
  return text.split(/\r?\n/)[0]!.trim();
}

/** `restore`: on the closed embedded store, never through a server (it would be replacing its own store). */
async function restore(request: ControlRequest): Promise<ControlReply> {
  const [{ loadConfig }, { BadBackupError, restoreBackup }, { DATABASE_FILE }] = await Promise.all([
    import('../config.ts'),
    import('../store/embedded/backup.ts'),
    import('../store/embedded/store.ts'),
  ]);
  const config = loadConfig();
  if (config.mongodbUri) return { ok: false, usage: true, message: 'restore replaces the embedded store; with MONGODB_URI, use mongorestore' };
  const from = request.args.from;
  if (!from) return { ok: false, usage: true, message: '--from is required' };
  try {
    return { ok: true, result: await restoreBackup(config.dataDir, from, DATABASE_FILE) };
  } catch (err) {
    if (err instanceof BadBackupError) return { ok: false, usage: false, message: err.message };
    if ((err as { code?: string }).code === 'STORE_LOCKED') {
      return { ok: false, usage: false, message: `${(err as Error).message} Nothing was changed: restore replaces the whole store, so it runs only while the store is closed.` };
    }
    throw err;
  }
}

async function execute(request: ControlRequest): Promise<ControlReply> {
  if (request.command === 'restore') return restore(request);
  const [{ default: pino }, { loadConfig }, { commands, UsageError }, { progressDisplay }] = await Promise.all([
    import('pino'),
    import('../config.ts'),
    import('./commands.ts'),
    import('./progress.ts'),
  ]);
  const config = loadConfig();
  const log = pino({ level: 'warn' }, pino.destination(2));
  const display = progressDisplay();
  const local = isCommand(request.command) ? commands[request.command].runLocal : undefined;
  if (local) {
    // Needs no store: runs here even while a server holds it.
    try {
      return { ok: true, result: await local(config, request.args, display.notify) };
    } catch (err) {
      return { ok: false, usage: err instanceof UsageError, message: err instanceof Error ? err.message : String(err) };
    } finally {
      display.stop();
    }
  }
  const [{ bootstrap }, { VERSION }, { controlSocketPath, runCommand, sendControl }] = await Promise.all([
    import('../start/bootstrap.ts'),
    import('../lib/version.ts'),
    import('./control.ts'),
  ]);
  try {
    // A running server runs the command itself, so its caches (keys, members, plans) see it at once.
    if (!config.mongodbUri) {
      const reply = await sendControl(controlSocketPath(config.dataDir), request, display.notify).catch((err: NodeJS.ErrnoException) => {
        if (['ENOENT', 'ECONNREFUSED'].includes(err.code ?? '')) return undefined;
        throw err;
      });
      if (reply) return reply;
    }
    const runtime = await bootstrap(config, log, VERSION, 'command');
    try {
      return await runCommand(runtime.services, request, display.notify);
    } finally {
      await runtime.close();
    }
  } finally {
    display.stop();
  }
}

async function main(): Promise<void> {
  let request: ControlRequest;
  try {
    request = parse(process.argv.slice(2));
  } catch (err) {
    fail(`${(err as Error).message}\n${usage()}`, 2);
  }
  const secretOption = SECRET_FROM_STDIN[request.command];
  if (secretOption && request.args[secretOption] === undefined) {
    const secret = await readSecretLine(secretOption);
    if (!secret) fail(`--${secretOption} is required, on the command line or as the first line of stdin`, 2);
    request.args[secretOption] = secret;
  }
  (await import('../outbound/bottleneck-yield.ts')).patchBottleneckYield();
  try {
    const reply = await execute(request);
    if (!reply.ok) fail(reply.message, reply.usage ? 2 : 1);
    process.stdout.write(JSON.stringify(reply.result, null, 2) + '\n');
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
}

void main();
