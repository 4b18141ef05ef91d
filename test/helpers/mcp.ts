/**
 * One MCP request by hand, as a client of either protocol revision sends it after its handshake
 * (2025-11-25) or discovery (2026-07-28): for tests of what the SDK clients never send, or of the
 * wire itself. On 2026-07-28 the `_meta` envelope and the `Mcp-Method`/`Mcp-Name` headers are
 * added unless `headers` says otherwise.
 */
export type Revision = '2025-11-25' | '2026-07-28';

export const envelope = (revision: Revision) => ({
  'io.modelcontextprotocol/protocolVersion': revision,
  'io.modelcontextprotocol/clientInfo': { name: 'prospecta-tests', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

export interface RawAnswer {
  status: number;
  bytes: number;
  body: { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
}

export async function rawMcp(
  baseUrl: string,
  apiKey: string,
  revision: Revision,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const modern = revision === '2026-07-28';
  const name: Record<string, string> = modern && typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {};
  const res = await fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${apiKey}`,
      'MCP-Protocol-Version': revision,
      ...(modern ? { 'Mcp-Method': method, ...name } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: modern ? { ...params, _meta: { ...envelope(revision), ...(params._meta as object) } } : params }),
  });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('text/event-stream') ? text.split('\n').find((line) => line.startsWith('data: '))!.slice(6) : text;
  return { status: res.status, bytes: Buffer.byteLength(text), body: JSON.parse(json) as RawAnswer['body'] };
}
