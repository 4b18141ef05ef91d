/** MCP_ALLOWED_ORIGINS: origins as a browser sends them in `Origin`, anything else refused at start-up. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/config.ts';

describe('MCP_ALLOWED_ORIGINS', () => {
  it('is a comma-separated list of origins, normalized as a browser sends them', () => {
    expect(loadConfig({}).mcpAllowedOrigins).toEqual([]);
    expect(loadConfig({ MCP_ALLOWED_ORIGINS: 'https://App.Example.com, http://127.0.0.1:5173/,' }).mcpAllowedOrigins).toEqual([
      'https://app.example.com',
      'http://127.0.0.1:5173',
    ]);
  });

  it('refuses what is not an origin, naming the variable', () => {
    for (const value of ['app.example.com', 'ftp://files.example.com', 'https://app.example.com/mcp', 'https://app.example.com?x=1']) {
      expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: value }), value).toThrow(/MCP_ALLOWED_ORIGINS/);
    }
  });
});
