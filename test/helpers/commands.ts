/**
 * `prospecta` commands run in the test's own process, through what the CLI runs (the commands of
 * server/cli/commands.ts over a store bootstrapped as the CLI bootstraps it), for tests whose
 * subject is elsewhere (a server killed with SIGKILL, two instances on one database) and which
 * only need a command's effect: a CLI process of its own spends a second or two starting. The
 * CLI as users run it is tested as a process (test/server/cli/).
 */
import pino from 'pino';
import { runCommand } from '../../server/cli/control.ts';
import { loadConfig } from '../../server/config.ts';
import { bootstrap } from '../../server/start/bootstrap.ts';

/**
 * Runs `command` with `args` (options without their dashes) on the store `env` names, as
 * `prospecta` would with that environment and no server holding an embedded store; its JSON answer.
 */
export async function commandHere(env: Record<string, string>, command: string, args: Record<string, string> = {}): Promise<any> {
  const runtime = await bootstrap(loadConfig({ LOG_LEVEL: 'silent', ...env }), pino({ level: 'silent' }), 'test', 'command');
  try {
    const reply = await runCommand(runtime.services, { command, args });
    if (!reply.ok) throw new Error(`prospecta ${command}: ${reply.message}`);
    return reply.result;
  } finally {
    await runtime.close();
  }
}

/** A workspace on the active plan (which starts at 0 credits), granted `credits`. */
export async function workspaceHere(env: Record<string, string>, name: string, credits: number): Promise<{ workspaceId: string; apiKey: string }> {
  const { workspaceId, apiKey } = (await commandHere(env, 'workspace create', { name, plan: 'active' })) as { workspaceId: string; apiKey: string };
  await commandHere(env, 'credits grant', { workspace: workspaceId, amount: String(credits) });
  return { workspaceId, apiKey };
}
