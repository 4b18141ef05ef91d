export function whitelistEntry(serverUrl: string | undefined): string;
export function buildAddon(options: { serverUrl: string }): Promise<{ exports: string[] }>;
export function bundleScript(entry: string, options?: { define?: Record<string, string> }): Promise<{ code: string; exports: string[]; global: string }>;
