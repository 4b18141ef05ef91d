/**
 * `npx prospecta <command>`: JSON on stdout, errors on stderr with a non-zero exit code.
 * When a running server holds the embedded store, the command is sent to it over the control
 * socket instead of being refused.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { bootstrap } from '../bootstrap.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { patchBottleneckYield } from '../outbound/bottleneck-yield.ts';
import { VERSION } from '../version.ts';
import { commands, usage, UsageError } from './commands.ts';
import { controlSocketPath, runCommand, sendControl, type ControlReply, type ControlRequest } from './control.ts';
import { progressDisplay } from './progress.ts';

function fail(message: string, code = 1): never {
  process.stderr.write(`prospecta: ${message}\n`);
  process.exit(code);
}

function parse(argv: string[]): ControlRequest {
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
      file: { type: 'string' },
      list: { type: 'string' },
      provider: { type: 'string' },
      subject: { type: 'string' },
      issuer: { type: 'string' },
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
  if (!commands[command]) fail(`${command ? `unknown command "${command}"\n` : ''}${usage()}`, 2);
  const { help: _help, ...args } = values;
  // A running server may execute the command, from its own working directory.
  if (args.dir) args.dir = path.resolve(args.dir);
  if (args.file) args.file = path.resolve(args.file);
  return { command, args: args as Record<string, string | undefined> };
}

async function execute(request: ControlRequest): Promise<ControlReply> {
  const config = loadConfig();
  const log = pino({ level: 'warn' }, pino.destination(2));
  const display = progressDisplay();
  const local = commands[request.command]?.runLocal;
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
  try {
    const runtime = await bootstrap(config, log, VERSION, 'command');
    try {
      return await runCommand(runtime.services, request, display.notify);
    } finally {
      await runtime.close();
    }
  } catch (err) {
    if ((err as { code?: string }).code !== 'STORE_LOCKED') throw err;
    try {
      return await sendControl(controlSocketPath(config.dataDir), request, display.notify);
    } catch {
      throw err;
    }
  } finally {
    display.stop();
  }
}

async function main(): Promise<void> {
  patchBottleneckYield();
  let request: ControlRequest;
  try {
    request = parse(process.argv.slice(2));
  } catch (err) {
    fail(`${(err as Error).message}\n${usage()}`, 2);
  }
  try {
    const reply = await execute(request);
    if (!reply.ok) fail(reply.message, reply.usage ? 2 : 1);
    process.stdout.write(JSON.stringify(reply.result, null, 2) + '\n');
  } catch (err) {
    if (err instanceof ConfigError || (err as { code?: string }).code === 'STORE_LOCKED') fail((err as Error).message);
    fail(err instanceof Error ? err.message : String(err));
  }
}

void main();
