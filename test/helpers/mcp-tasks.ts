/**
 * A 2026-07-28 client of MCP's tasks extension, on the official v2 SDK's HTTP transport (which
 * derives the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers from each message, the
 * task id included for `tasks/*`). The SDK's `Client` itself (2.4.0) cannot be it: its result
 * decoder refuses any `resultType` but `complete` and `input_required`, so a `tools/call` that
 * answers a task fails inside it before a caller could see the task. Each request carries the
 * revision's `_meta` envelope, declaring the extension unless `declare` is false.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { envelope } from './mcp.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${code} ${message}`);
  }
}

export interface TasksClient {
  request<T = Record<string, any>>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

export async function tasksClient(baseUrl: string, apiKey: string, { declare = true } = {}): Promise<TasksClient> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } });
  const waiting = new Map<number, { resolve(result: any): void; reject(err: Error): void }>();
  transport.onmessage = (message) => {
    if (!('id' in message) || typeof message.id !== 'number') return;
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if ('error' in message) pending?.reject(new RpcError(message.error.code, message.error.message, message.error.data));
    else if ('result' in message) pending?.resolve(message.result);
  };
  await transport.start();
  let lastId = 0;
  const capabilities = declare ? { extensions: { [TASKS_EXTENSION]: {} } } : {};
  return {
    async request(method, params = {}) {
      const id = ++lastId;
      const answered = new Promise<any>((resolve, reject) => waiting.set(id, { resolve, reject }));
      const _meta = { ...envelope('2026-07-28'), 'io.modelcontextprotocol/clientCapabilities': capabilities };
      try {
        await transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta } });
      } catch (err) {
        // An error answered with an HTTP error status reaches the sender, not onmessage.
        waiting.delete(id);
        const { code, message, data } = err as { code?: unknown; message: string; data?: unknown };
        throw typeof code === 'number' ? new RpcError(code, message, data) : err;
      }
      return answered;
    },
    close: () => transport.close(),
  };
}
