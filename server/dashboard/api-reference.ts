/**
 * The API reference at `/docs`: Swagger UI rendering `/openapi.json`, served from the installed
 * swagger-ui-dist package (never a CDN), under the dashboard's CSP. No sign-in: the reference is
 * as public as `/openapi.json`, and "Try it out" uses a key the reader pastes into Authorize.
 *
 * - `GET /docs`: an HTML page with no inline script.
 * - `GET /docs/assets/swagger-ui-<version>.js|.css`: the package's bundle and stylesheet, read and
 *   gzipped on first use (the bundle is 1.5 MB, 0.4 MB gzipped; most processes never serve it),
 *   cached for a year since the version is in the name.
 * - The page's own script and style are the `api-reference` entry of the dashboard's build,
 *   served with its other hashed files under /dashboard/assets/.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AppContext, Middleware } from '../http/state.ts';
import { serveImmutable, staticFile, type Assets, type StaticFile } from './assets.ts';
import { html } from './html.ts';
import { contentSecurityPolicy, setPageHeaders } from './security-headers.ts';

export const DOCS_PATH = '/docs';
const ASSETS = `${DOCS_PATH}/assets/`;

/**
 * The dashboard's own policy, unchanged: Swagger UI 5 sets its styles through React's `style`
 * prop (CSSOM, which `style-src 'self'` allows) and its stylesheet, so it needs no
 * 'unsafe-inline'. Checked in Chromium by listening for `securitypolicyviolation` while
 * listing, expanding, authorizing, trying an operation and opening the schemas.
 */
const DOCS_CSP = contentSecurityPolicy();

const require = createRequire(import.meta.url);

function swaggerUiDist(): { dir: string; version: string } {
  const manifest = require.resolve('swagger-ui-dist/package.json');
  return { dir: dirname(manifest), version: (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version };
}

/** The `/docs` routes; call with the dashboard's built assets, which hold the page's own script. */
export function apiReference(assets: Assets): Middleware {
  const { dir, version } = swaggerUiDist();
  const sources: Record<string, { file: string; type: string }> = {
    [`swagger-ui-${version}.js`]: { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
    [`swagger-ui-${version}.css`]: { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  };
  const files = new Map<string, StaticFile>();
  const fileOf = (name: string): StaticFile | null => {
    const source = sources[name];
    if (!source) return null;
    let file = files.get(name);
    if (!file) {
      file = staticFile(source.type, readFileSync(join(dir, source.file)));
      files.set(name, file);
    }
    return file;
  };

  const page = (): string | null => {
    const own = assets.entry('api-reference');
    if (!own) return null;
    const css = [`${ASSETS}swagger-ui-${version}.css`, ...(own.css ? [own.css] : [])];
    return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · prospecta</title>
<link rel="icon" href="data:,">
${css.map((href) => html`<link rel="stylesheet" href="${href}">
`)}<script defer src="${`${ASSETS}swagger-ui-${version}.js`}"></script>
<script type="module" src="${own.js}"></script>
</head>
<body>
<header class="docs-bar">
<strong>prospecta API reference</strong>
<p>Every operation of <code>/openapi.json</code>. To try one, paste an API key into <em>Authorize</em>: it is kept in this tab only, never stored.</p>
<a href="/dashboard">Dashboard</a>
</header>
<main id="swagger-ui"></main>
</body>
</html>
`.value;
  };

  const serve: Middleware = async (ctx: AppContext, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path.startsWith(ASSETS)) {
      const file = fileOf(ctx.path.slice(ASSETS.length));
      if (!file) return next();
      return serveImmutable(ctx, file);
    }
    const document = page();
    setPageHeaders(ctx, DOCS_CSP);
    // The page names hashed files that change with each build: revalidate it (it holds no workspace data).
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    if (document === null) {
      ctx.status = 503;
      ctx.body = '<!doctype html><html lang="en"><title>API reference</title><p>The API reference’s files were not built: run <code>npm run build</code>.</p></html>';
      return;
    }
    ctx.body = document;
  };
  // Every /v1 request passes through here: a plain function hands it on, since an async one costs
  // a promise and its microtasks per hop (issue 35).
  return (ctx, next) => (ctx.path !== DOCS_PATH && ctx.path !== `${DOCS_PATH}/` && !ctx.path.startsWith(ASSETS) ? next() : serve(ctx, next));
}
