/**
 * /docs: Swagger UI over /openapi.json. swagger-ui-bundle.js (served by the server from the
 * swagger-ui-dist package) defines SwaggerUIBundle before this module runs: both are deferred
 * and run in document order. "Try it out" sends the key pasted into Authorize, which stays in
 * this tab's memory only (persistAuthorization: false: never written to localStorage).
 */
import './api-reference.css';

interface SwaggerRequest {
  url: string;
  credentials?: RequestCredentials;
  headers: Record<string, string>;
}

declare const SwaggerUIBundle: ((options: Record<string, unknown>) => unknown) & { presets: { apis: unknown } };

SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  // Deep links put an <a> inside each operation's toggle button, which screen readers cannot
  // reach as such (axe: nested-interactive); the reference reads the same without them.
  deepLinking: false,
  persistAuthorization: false,
  tryItOutEnabled: false,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
  filter: true,
  // The public validator is another origin: the CSP would refuse its badge, and the document is ours.
  validatorUrl: null,
  // Requests carry the pasted key and nothing else: no dashboard cookie rides along.
  requestInterceptor: (request: SwaggerRequest) => ({ ...request, credentials: 'omit' }),
  // The server picker has no label of its own (axe: select-name).
  onComplete: () => document.querySelector('.servers select')?.setAttribute('aria-label', 'Server'),
});
