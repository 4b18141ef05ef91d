/** The sign-in page, and the pages that say why a sign-in did not happen. Work without script. */
import type { Assets } from './assets.ts';
import { documentHtml, html, type Html } from './html.ts';

export interface SignInPageOptions {
  /** Why the visitor is here (a refused link, a sign-out, an issuer error); none for a plain visit. */
  notice?: { text: string; kind: 'error' | 'info' };
  /** The issuer to sign in at, when the dashboard has an OIDC client. */
  issuer: string | null;
  /**
   * An unspent one-time link's token: the page asks for a click that posts it back (a plain form,
   * no script), since opening the link must neither sign in nor spend it.
   */
  linkToken?: string;
}

export function signInPage(assets: Assets, { notice, issuer, linkToken }: SignInPageOptions): string {
  if (linkToken !== undefined) {
    return documentHtml(assets, {
      title: 'Sign in · prospecta',
      body: html`<main class="sign-in">
<h1>prospecta</h1>
<h2>Sign in to your workspace’s dashboard</h2>
<p>This one-time link signs this browser in once. If you did not ask for it, close this page.</p>
<form method="post" action="/dashboard/login">
<input type="hidden" name="token" value="${linkToken}">
<button type="submit" class="button">Sign in</button>
</form>
</main>`,
    });
  }
  const noticeHtml: Html = notice
    ? notice.kind === 'error'
      ? html`<p class="notice notice-error" role="alert">${notice.text}</p>`
      : html`<p class="notice" role="status">${notice.text}</p>`
    : html``;
  const issuerHtml: Html = issuer
    ? html`<p><a class="button" href="/dashboard/auth/start">Sign in with ${new URL(issuer).host}</a></p>
<p>Or use a one-time link:</p>`
    : html``;
  return documentHtml(assets, {
    title: 'Sign in · prospecta',
    body: html`<main class="sign-in">
<h1>prospecta</h1>
${noticeHtml}
<h2>Sign in to your workspace’s dashboard</h2>
${issuerHtml}
<p>On the server, ask for a one-time sign-in link; it works once, for 10 minutes:</p>
<pre><code>npx prospecta dashboard link --workspace WORKSPACE_ID</code></pre>
<p><a href="/docs">API reference</a></p>
</main>`,
  });
}

/** The page of a dashboard address that does not exist. */
export function notFoundPage(assets: Assets): string {
  return documentHtml(assets, {
    title: 'Not found · prospecta',
    body: html`<main class="sign-in"><h1>prospecta</h1><p class="notice notice-error" role="alert">There is no such page.</p><p><a href="/dashboard">Go to the dashboard</a></p></main>`,
  });
}
