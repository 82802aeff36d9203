// Signs in to the /ui/ dashboard with single sign-on in Debian's chromium
// (playwright-core), as a person would: "Sign in with …", the OpenID
// provider's own login and consent pages (test/oidc-provider, a real
// provider), back to the dashboard, which then shows the user's projects and
// no one else's. cmd/taskgraph/e2e_sso_browser_test.go runs it.
// Environment: BASE_URL, LOGIN, PROJECT (a project of LOGIN's), HIDDEN (a
// project of someone else), CHROMIUM, OUT_DIR. Prints "DONE" when every
// check passed.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const { BASE_URL, LOGIN, PROJECT, HIDDEN, CHROMIUM, OUT_DIR } = process.env;
const say = (line) => process.stdout.write(`${line}\n`);
mkdirSync(OUT_DIR, { recursive: true });

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const errors = [];
page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
// The dashboard's console errors count; the provider's pages (which load
// fonts from the internet) are not ours to judge.
page.on('console', (m) => {
  if (m.type() === 'error' && page.url().startsWith(BASE_URL)) errors.push(`console: ${m.text()}`);
});
// The authorization request the dashboard sends the browser to.
let authRequest = null;
page.on('request', (r) => {
  if (!authRequest && r.isNavigationRequest() && !r.url().startsWith(BASE_URL)) authRequest = new URL(r.url());
});

try {
  say('step: the sign-in page offers the provider');
  await page.goto(`${BASE_URL}/ui/#/`);
  const button = page.getByRole('button', { name: /^Sign in with 127\.0\.0\.1:\d+$/ });
  await button.waitFor();
  await page.screenshot({ path: join(OUT_DIR, '1-sign-in.png') });
  await button.click();

  say('step: the provider\'s login and consent pages');
  await page.waitForURL((u) => !u.href.startsWith(BASE_URL));
  const authURL = authRequest;
  assert.equal(authURL.searchParams.get('code_challenge_method'), 'S256', 'PKCE');
  assert.equal(authURL.searchParams.get('response_type'), 'code');
  assert.equal(authURL.searchParams.has('client_secret'), false);
  await page.locator('input[name="login"]').fill(LOGIN);
  await page.locator('input[name="password"]').fill('any password');
  await page.screenshot({ path: join(OUT_DIR, '2-provider-login.png') });
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.waitForLoadState();
  if (!page.url().startsWith(BASE_URL)) {
    await page.getByRole('button', { name: 'Continue' }).click(); // consent
  }

  say('step: back on the dashboard, signed in, the user\'s projects');
  await page.waitForURL((u) => u.href.startsWith(`${BASE_URL}/ui/`));
  await page.getByText('Signed in as').waitFor();
  await page.getByRole('link', { name: PROJECT }).waitFor();
  assert.equal(await page.getByRole('link', { name: HIDDEN }).count(), 0, 'another user\'s project is not listed');
  assert.equal(new URL(page.url()).search, '', 'the code is taken off the address bar');
  const token = await page.evaluate(() => sessionStorage.getItem('taskgraph.token'));
  assert.equal(token.split('.').length, 3, 'the bearer credential is the ID token (a JWT)');
  await page.screenshot({ path: join(OUT_DIR, '3-signed-in.png') });

  say('step: the project page works with the JWT');
  await page.getByRole('link', { name: PROJECT }).click();
  await page.getByRole('heading', { level: 1, name: new RegExp(PROJECT) }).waitFor();

  say('step: sign out, and back in without the login page (the provider remembers the session)');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: /^Sign in with/ }).click();
  await page.waitForURL((u) => u.href.startsWith(`${BASE_URL}/ui/`) && !u.search);
  await page.getByText('Signed in as').waitFor();

  assert.deepEqual(errors, []);
  say('DONE');
} catch (err) {
  await page.screenshot({ path: join(OUT_DIR, 'failure.png') }).catch(() => {});
  console.error(err);
  console.error(errors.join('\n'));
  process.exitCode = 1;
} finally {
  await browser.close();
}
