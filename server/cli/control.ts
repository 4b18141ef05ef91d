/**
 * The control socket: a Unix socket inside DATA_DIR (mode 0600, so only the owner of the data
 * can use it) through which `prospecta` commands reach a running server that holds the embedded
 * store. One JSON line in; out, a JSON line per progress event, then the reply's line.
 */
import { isCommand } from './usage.ts';
import { chmod, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { AppServices } from '../start/bootstrap.ts';
import { CommandRefused, commands, UsageError, type Args, type CommandEvent } from './commands.ts';

export interface ControlRequest {
  command: string;
  args: Args;
}

export type ControlReply = { ok: true; result: unknown } | { ok: false; usage: boolean; message: string };

export function controlSocketPath(dataDir: string): string {
  return path.resolve(dataDir, 'control.sock');
}

export async function runCommand(
  services: AppServices,
  request: ControlRequest,
  notify: (event: CommandEvent) => void = () => undefined,
  signal?: AbortSignal,
): Promise<ControlReply> {
  const command = isCommand(request.command) ? commands[request.command] : undefined;
  if (!command) return { ok: false, usage: true, message: `unknown command: ${request.command}` };
  try {
    return { ok: true, result: await command.run(services, request.args, notify, signal) };
  } catch (err) {
    if (err instanceof UsageError) return { ok: false, usage: true, message: err.message };
    if (err instanceof CommandRefused) return { ok: false, usage: false, message: err.message };
    services.log.error({ err, command: request.command }, 'control command failed');
    return { ok: false, usage: false, message: err instanceof Error ? err.message : String(err) };
  }
}

/** Serves commands to the CLI; the caller owns the store lock, so a leftover socket is stale. */
export async function serveControl(services: AppServices, socketPath: string): Promise<net.Server> {
  await rm(socketPath, { force: true });
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline < 0) {
        if (buffer.length > 65_536) socket.destroy();
        return;
      }
      let request: ControlRequest;
      try {
        request = JSON.parse(buffer.slice(0, newline)) as ControlRequest;
      } catch {
        socket.end(JSON.stringify({ ok: false, usage: true, message: 'malformed control request' }) + '\n');
        return;
      }
      const notify = (event: CommandEvent) => {
        if (socket.writable) socket.write(JSON.stringify(event) + '\n');
      };
      // The command line gone (Ctrl-C, a closed terminal) before its answer: a long command stops.
      const gone = new AbortController();
      let answered = false;
      socket.once('close', () => {
        if (!answered) gone.abort(new Error('the command line went away'));
      });
      void runCommand(services, request, notify, gone.signal).then((reply) => {
        answered = true;
        if (!gone.signal.aborted) socket.end(JSON.stringify(reply) + '\n');
        else if (request.command === 'import cnpj') services.log.info({ command: request.command }, 'import stopped: its command line went away');
      });
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  await chmod(socketPath, 0o600);
  return server;
}

/** Sends one command to a running server; rejects when nothing listens on the socket. */
export function sendControl(
  socketPath: string,
  request: ControlRequest,
  notify: (event: CommandEvent) => void = () => undefined,
): Promise<ControlReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffer = '';
    let reply: ControlReply | undefined;
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(JSON.stringify(request) + '\n'));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        let message: ControlReply | CommandEvent;
        try {
          message = JSON.parse(buffer.slice(0, newline)) as ControlReply | CommandEvent;
        } catch {
          socket.destroy(new Error('the server sent a malformed control reply'));
          return;
        }
        buffer = buffer.slice(newline + 1);
        if ('ok' in message) reply = message;
        else notify(message);
      }
    });
    socket.on('error', reject);
    socket.on('end', () => {
      if (reply) resolve(reply);
      else reject(new Error('the server closed the control socket without answering'));
    });
  });
}
