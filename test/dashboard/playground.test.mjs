// Drives the bundled GraphiQL playground (/) in Debian's chromium with
// playwright-core, as a person would: enter the token in the Headers tab, see
// the schema arrive in the docs without a manual re-fetch, run a subscription
// and see an event arrive. cmd/taskgraph/e2e_playground_test.go runs it
// against a real server, at desktop and phone width.
// Environment: BASE_URL, TOKEN, CHROMIUM, OUT_DIR, WIDTH (px).
// Prints "DONE" when every check passed.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const { BASE_URL, TOKEN, CHROMIUM, OUT_DIR } = process.env;
const WIDTH = Number(process.env.WIDTH || 1440);
const say = (line) => process.stdout.write(`${line}\n`);
mkdirSync(OUT_DIR, { recursive: true });

const api = async (q, variables) => {
  const res = await fetch(`${BASE_URL}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query: q, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(`API: ${JSON.stringify(body.errors)}`);
  return body.data;
};

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
const errors = [];
page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
// editor sets the text of the CodeMirror editor whose text matches re.
const editor = (re, text) => page.evaluate(([src, value]) => {
  const re = new RegExp(src);
  const cm = Array.from(document.querySelectorAll('.CodeMirror')).map((e) => e.CodeMirror)
    .find((c) => c && re.test(c.getValue()));
  if (!cm) throw new Error(`no editor holds ${src}`);
  cm.setValue(value);
}, [re.source, text]);
const result = () => page.evaluate(() => {
  const e = document.querySelector('.result-window .CodeMirror');
  return e && e.CodeMirror ? e.CodeMirror.getValue() : '';
});

try {
  const slug = `p${Date.now().toString(36).slice(-6)}-${WIDTH}`; // the first 8 letters make the display-id prefix
  const project = (await api(`mutation($in: CreateProjectInput!) { createProject(input: $in) { project { id } } }`,
    { in: { name: `Playground ${WIDTH}`, slug } })).createProject.project;

  say('step: the page opens at a fresh origin: no token yet');
  await page.goto(`${BASE_URL}/`);
  await page.waitForSelector('.graphiql-container');
  await page.getByRole('button', { name: 'Headers' }).waitFor();

  say('step: the token entered in the Headers tab brings the schema, no re-fetch click');
  await editor(/^\s*\{\s*"Authorization"/, JSON.stringify({ Authorization: `Bearer ${TOKEN}` }, null, 2));
  await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
  await page.getByText('Root Types').waitFor({ timeout: 15000 });
  assert.equal(await page.getByText('Error fetching schema').count(), 0);

  say('step: a subscription runs over the websocket and shows an event');
  await editor(/viewer/, `subscription { projectEvents(projectId: "${project.id}", types: [TASK_CREATED]) {
  type ... on TaskCreated { task { title } } } }`);
  await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).click();
  // The subscription is live once the server counts it; then a task is created.
  const title = `created while the playground listens (${WIDTH})`;
  let seen = '';
  for (let i = 0; i < 60 && !seen.includes(title); i++) {
    await api(`mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
      { in: { projectId: project.id, title: i === 0 ? title : `${title} #${i}` } });
    await page.waitForTimeout(500);
    seen = await result();
  }
  assert.ok(seen.includes(title) || /TASK_CREATED/.test(seen), `the result pane shows the event: ${seen}`);
  assert.doesNotMatch(seen, /subscriptions need a websocket|not properly configured/);
  await page.screenshot({ path: join(OUT_DIR, `playground-${WIDTH}.png`) });
  assert.deepEqual(errors, []);
  say('DONE');
} catch (e) {
  await page.screenshot({ path: join(OUT_DIR, `playground-${WIDTH}-failed.png`) }).catch(() => {});
  console.error(e);
  process.exitCode = 1;
} finally {
  await browser.close();
}
