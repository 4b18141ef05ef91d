export function buildAddon(): Promise<{ exports: string[] }>;
