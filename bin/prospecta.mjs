#!/usr/bin/env node
// The `prospecta` command. `npm install` builds dist/ (the `prepare` script); build it here if a
// checkout skipped that, so `npx prospecta` always works from the repository root.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.mjs', import.meta.url);
if (!existsSync(cli)) await (await import('../build.mjs')).buildServer();
await import(cli.href);
