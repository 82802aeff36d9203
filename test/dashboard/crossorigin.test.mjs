// Opens a small front-end (test/dashboard/crossorigin/) served from another
// origin than the Taskgraph server's in Debian's chromium (playwright-core):
// from an origin in --allowed-origins its fetch query, fetch mutation and
// graphql-ws subscription work; from an origin not listed the browser blocks
// the fetch (no CORS headers) and the server refuses the websocket.
// cmd/taskgraph/e2e_crossorigin_test.go runs it.
// Environment: ALLOWED_URL, OTHER_URL (the page at an allowed origin and at
// one not listed, with its #api=…&token=…&project=… fragment), PROJECT (its
// name), CHROMIUM, OUT_DIR. Prints "DONE" when every check passed.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const { ALLOWED_URL, OTHER_URL, PROJECT, CHROMIUM, OUT_DIR } = process.env;
const say = (line) => process.stdout.write(`${line}\n`);
mkdirSync(OUT_DIR, { recursive: true });

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const page = await browser.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));

const outcome = async (url) => {
  await page.goto(url);
  await page.waitForFunction(() => window.result && window.result.done, null, { timeout: 30000 });
  return page.evaluate(() => window.result);
};

try {
  say('step: from an allowed origin, a query, a mutation and a subscription');
  const ok = await outcome(ALLOWED_URL);
  await page.screenshot({ path: join(OUT_DIR, 'allowed.png') });
  assert.equal(ok.error, undefined, `the page failed: ${ok.error}`);
  assert.equal(ok.project, PROJECT);
  assert.equal(ok.event, 'TASK_CREATED made on another origin');

  say('step: from an origin not listed, the browser blocks the fetch and the server the websocket');
  const refused = await outcome(OTHER_URL);
  await page.screenshot({ path: join(OUT_DIR, 'refused.png') });
  assert.match(refused.error || '', /Failed to fetch/);
  assert.ok(refused.wsError, 'the websocket was refused');
  assert.equal(refused.event, undefined);

  assert.deepEqual(errors, []);
  say('DONE');
} catch (err) {
  console.error(err);
  console.error(errors.join('\n'));
  process.exitCode = 1;
} finally {
  await browser.close();
}
