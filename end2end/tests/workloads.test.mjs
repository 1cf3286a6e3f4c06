// Browser test of workloads: a multi-turn sweep started from the New sweep form against
// `plateau sim` (whose prefix cache serves each conversation's history), its run page's
// "By turn" section (a table per level, a row per turn, the sentence on why TTFT moves),
// and the compare page calling it "not like for like" against a single-turn sweep.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, watchErrors, startSim } from './support.mjs';

const env = withAppAndBrowser();

async function finished(id) {
  for (let i = 0; i < 600; i++) {
    const run = await (await fetch(`${env.server.base}/api/v1/runs/${id}`)).json();
    if (run.status !== 'running') return run;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`sweep ${id} did not finish`);
}

test('a multi-turn sweep from the form shows its turns, and compare says the workload differs', { timeout: 300_000 }, async () => {
  // Prefill costs 0.5 ms a prompt token: what the cache serves shows in TTFT.
  const sim = await startSim(['--prefill-ms-per-token', '0.5']);
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  try {
    await page.goto(env.server.base + '/sweeps/new');
    await page.locator('input[name=url]').fill(sim.url);
    await page.locator('input[name=concurrency]').fill('1,2');
    await page.locator('input[name=max_tokens]').fill('16');
    await page.locator('input[name=name]').fill('conversations');
    await page.locator('select[name=workload]').selectOption('multi_turn');
    await page.locator('input[name=turns]').fill('3');
    await page.locator('input[name=user_tokens]').fill('48');
    await page.locator('#sweep-submit').click();
    await page.waitForURL(/\/runs\/[a-z0-9]+$/);
    const multi = page.url().split('/').pop();
    assert.equal((await finished(multi)).status, 'complete');
    // The page reloads itself when the run completes (a reload of ours could race it).
    await page.waitForFunction(() => !document.getElementById('live') && document.getElementById('turns'), null,
      { timeout: 30_000 });
    assert.equal(await page.locator('#turns h2').innerText(), 'By turn');
    assert.deepEqual(await page.locator('#turns .turn-level').allInnerTexts(), ['C=1', 'C=2']);
    const tables = page.locator('#turns .turn-table');
    assert.equal(await tables.count(), 2);
    for (let i = 0; i < 2; i++) {
      const rows = tables.nth(i).locator('tbody tr');
      assert.equal(await rows.count(), 3, 'a row per turn');
      const first = await rows.nth(0).locator('td').allInnerTexts();
      const third = await rows.nth(2).locator('td').allInnerTexts();
      assert.equal(first[0], '1');
      assert.equal(third[0], '3');
      assert.equal(first[1], String(i + 1), 'one request per user and turn');
      assert.equal(first[6], '0 %', 'turn 1: nothing cached');
      assert.ok(parseInt(third[6], 10) > 0, `turn 3 is served from the cache: ${third}`);
      const n = (s) => Number(s.replace(/,/g, ''));
      assert.ok(n(third[5]) > n(first[5]), `the context grows: ${first[5]} → ${third[5]}`);
    }
    const stories = await page.locator('#turns .turn-story').allInnerTexts();
    assert.equal(stories.length, 2);
    for (const s of stories) assert.match(s, /^TTFT (grows with turn|holds across turns) .*prefix cache/);
    assert.match(await page.locator('.facts').innerText(), /Workload\s+multi-turn 3 turns/);

    // The same target, single-turn, started over the API: compare calls them apart.
    const r = await fetch(`${env.server.base}/api/v1/sweeps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: sim.url, model: 'plateau-sim', name: 'one-shot', concurrency: [1, 2], max_tokens: 16, ignore_eos: true }),
    });
    assert.equal(r.status, 201, await r.clone().text());
    const single = (await r.json()).id;
    assert.equal((await finished(single)).status, 'complete');
    await page.goto(`${env.server.base}/runs/${single}`);
    assert.equal(await page.locator('#turns').count(), 0, 'a single-turn run has no By turn section');
    await page.goto(`${env.server.base}/compare?runs=${single}&runs=${multi}&baseline=${single}`);
    await page.locator('#comparability summary').click();
    assert.match(await page.locator('#verdicts').innerText(), /not like for like: workload differs \(multi-turn 3 turns vs single-turn\)/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await sim.stop();
  }
});
