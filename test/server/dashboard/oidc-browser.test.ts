/**
 * "Sign in with …" in headless Chromium: from the dashboard's sign-in page, through a real
 * authorization server's login and consent pages (oidc-provider on loopback), back to the
 * Overview signed in; then "Sign out".
 */
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestApp } from '../../helpers/app.ts';
import { startAppWithIssuer } from '../../helpers/dashboard.ts';
import { EVENTUALLY_TIMEOUT_MS } from '../../helpers/eventually.ts';

const chromiumPath = inject('chromiumPath');

let app: TestApp;
let browser: Browser;
let publicUrl: string;

describe.skipIf(!chromiumPath)('OIDC sign-in in a browser', () => {
  beforeAll(async () => {
    ({ app, publicUrl } = await startAppWithIssuer());
    browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('signs a new person up through the issuer and lands on the Overview; Sign out ends it', async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(EVENTUALLY_TIMEOUT_MS);
    const page = await context.newPage();
    await page.goto(`${publicUrl}/dashboard`);
    await page.getByRole('link', { name: /^Sign in with 127\.0\.0\.1:/ }).click();
    await page.locator('input[name=login]').fill('carla');
    await page.locator('input[name=password]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(page.url()).toBe(`${publicUrl}/dashboard`);
    // The workspace a sign-up creates is named from the ID token's e-mail.
    await page.getByText('carla@example.com').first().waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await context.close();
  });
});
