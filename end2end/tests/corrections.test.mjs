// Browser test of correcting runs: a run renamed and its facts set right from its page
// (the page shows them at once), deleted there with its box ticked, and runs deleted from
// the runs list; every correction in the audit log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { withAppAndBrowser, watchErrors, STORY_FILE } from './support.mjs';

const env = withAppAndBrowser();

async function importStory(name) {
  const form = new FormData();
  form.append('file', new Blob([readFileSync(STORY_FILE)]), 'kimi.txt');
  form.append('name', name);
  const resp = await fetch(env.server.base + '/api/v1/runs', { method: 'POST', body: form });
  assert.equal(resp.status, 201);
  return (await resp.json()).runs[0].id;
}

test('a run is renamed, its facts set right and deleted from its page', async () => {
  const id = await importStory('to correct');
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${env.server.base}/runs/${id}`);
  await page.locator('#run-edit summary').click();
  const form = page.locator('#run-edit-form');
  assert.equal(await form.locator('input[name=name]').inputValue(), 'to correct');
  await form.locator('input[name=name]').fill('corrected <b>run</b>');
  await form.locator('input[name=gpu_type]').fill('B200');
  await form.locator('input[name=gpu_count]').fill('4');
  await form.locator('input[name=engine]').fill('sglang');
  await form.locator('input[name=tags]').fill('Fixed, later');
  await form.locator('button[type=submit]').click();
  await page.waitForURL(new RegExp(`/runs/${id}$`));
  assert.equal(await page.locator('#run-name').innerText(), 'corrected <b>run</b>', 'shown as text');
  assert.match(await page.locator('dl.facts').innerText(), /4× B200/);
  assert.match(await page.locator('dl.facts').innerText(), /sglang/);
  assert.deepEqual(await page.locator('ul.tags li').allInnerTexts(), ['fixed', 'later']);

  // A refused edit comes back with its field named; nothing changed.
  await page.locator('#run-edit summary').click();
  await form.locator('input[name=name]').fill('   ');
  await form.locator('input[name=name]').evaluate((el) => el.removeAttribute('required'));
  await form.locator('button[type=submit]').click();
  await page.locator('#form-error').waitFor();
  assert.match(await page.locator('#form-error').innerText(), /name/);
  assert.equal(await page.locator('#run-name').innerText(), 'corrected <b>run</b>');

  // Deleting: the box first, then the run is gone and the list is shown.
  await page.locator('#run-edit summary').click();
  await page.locator('#run-delete-form input[name=confirm]').check();
  await page.locator('#run-delete-form button[type=submit]').click();
  await page.waitForURL(env.server.base + '/');
  const gone = await fetch(`${env.server.base}/api/v1/runs/${id}`);
  assert.equal(gone.status, 404);
  const log = await (await fetch(`${env.server.base}/api/v1/audit?run=${id}`)).json();
  assert.deepEqual(log.entries.map((e) => e.action), ['delete', 'edit']);
  assert.equal(log.entries[1].run_name, 'to correct');
  assert.deepEqual(errors, []);
  await page.close();
});

test('runs ticked on the runs list are deleted together', async () => {
  const a = await importStory('first to go');
  const b = await importStory('second to go');
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + '/');
  const before = (await (await fetch(env.server.base + '/api/v1/runs')).json()).length;
  for (const id of [a, b]) await page.locator(`#runs input[name=runs][value="${id}"]`).check();
  // Without the "delete" box ticked nothing is deleted.
  await page.locator('#delete-submit').click();
  await page.locator('#form-error').waitFor();
  assert.equal((await (await fetch(env.server.base + '/api/v1/runs')).json()).length, before);
  for (const id of [a, b]) await page.locator(`#runs input[name=runs][value="${id}"]`).check();
  await page.locator('#delete-confirm').check();
  await page.locator('#delete-submit').click();
  await page.waitForURL(env.server.base + '/');
  const after = await (await fetch(env.server.base + '/api/v1/runs')).json();
  assert.equal(after.length, before - 2);
  assert.ok(!after.some((r) => r.id === a || r.id === b));
  // Comparing the ticked runs still works beside the delete box.
  const ids = after.slice(0, 2).map((r) => r.id);
  for (const id of ids) await page.locator(`#runs input[name=runs][value="${id}"]`).check();
  await page.locator('#compare-submit').click();
  await page.waitForURL(/\/compare\?runs=/);
  assert.deepEqual(errors, []);
  await page.close();
});
