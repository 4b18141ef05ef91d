export function buildServer(): Promise<void>;
export function buildDashboard(): Promise<void>;
