export function whitelistEntry(serverUrl: string | undefined): string;
export function buildAddon(options: { serverUrl: string }): Promise<{ exports: string[] }>;
