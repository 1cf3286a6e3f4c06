// Browser test of change points: sixteen nightly sweeps of one configuration against
// `plateau sim`, the first eight with a batch limit of 8 and the last eight with 4 (the
// deployment's batch limit halved half-way). The history page must show exactly one change
// point of the plateau's throughput, at the ninth run, with its segments either side; that
// run's page proposes it as an annotation, which accepted as "expected change: new
// baseline" restarts the regression gate's window there and marks the history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withAppAndBrowser, watchErrors, startSim, ROOT } from './support.mjs';

const env = withAppAndBrowser();

const run = promisify(execFile);

/** One sweep by the command line, stored on the app under test (`--server`), every request
 * timed on the simulator's model clock (`--sim-clock`): the same numbers however busy the
 * machine is, so every run finds its plateau and the change point is the batch limit's. */
async function sweep(url, name) {
  const bin = process.env.PLATEAU_BIN || join(ROOT, 'target', 'debug', 'plateau');
  const { stdout } = await run(bin, [
    'sweep', '--url', url, '--model', 'plateau-sim', '--name', name, '--concurrency', '4,8,16,32',
    '--requests', '32', '--max-tokens', '32', '--ignore-eos', '--no-metrics', '--seed', '1',
    '--plain', '--sim-clock', '--server', env.server.base,
  ], { env: { ...process.env, RUST_LOG: 'warn' } });
  const id = /stored → \S*\/runs\/(\S+)/.exec(stdout)?.[1];
  assert.ok(id, stdout);
  const stored = await (await fetch(`${env.server.base}/api/v1/runs/${id}`)).json();
  assert.equal(stored.status, 'complete', JSON.stringify(stored.status));
  return id;
}

/** The history chart's series named `name` (its data). */
function series(page, name) {
  return page.evaluate((n) => {
    const chart = window.echarts.getInstanceByDom(document.getElementById('chart-history'));
    const s = chart.getOption().series.find((x) => x.name === n);
    return s ? (s.data || []) : null;
  }, name);
}

test('a batch limit halved half-way is one change point at the right run, and a new baseline there', { timeout: 600_000 }, async () => {
  // Each night a fresh simulator (a redeployed server: no prefix cache kept from the night
  // before) on the model clock, its prompts free to prefill (so the order in which a
  // level's requests reach it, which the machine decides, changes nothing): the steps take
  // no wall time and every night of one batch limit measures the same.
  const ids = [];
  for (let i = 0; i < 16; i++) {
    const sim = await startSim(['--max-batch', i < 8 ? '8' : '4', '--clock', 'model', '--prefill-ms-per-token', '0']);
    try {
      ids.push(await sweep(sim.url, `nightly ${i}`));
    } finally {
      await sim.stop();
    }
  }
  const page = await env.browser.newPage();
  const errors = watchErrors(page);
  // The plateau's throughput (the default view follows C=32, the highest load every run has).
  await page.goto(`${env.server.base}/runs/${ids[15]}/history?level=plateau`);
  await page.locator('#chart-history canvas').waitFor();
  // The plateau's throughput: one change point, at the ninth run (index 8).
  const plateau = await series(page, 'Plateau throughput');
  assert.equal(plateau.length, 16, JSON.stringify(plateau));
  const change = await series(page, 'change point');
  assert.equal(change.length, 1, JSON.stringify(change));
  assert.equal(change[0][0], 8);
  // Two segments: a flat mean over runs 0–7, a break, a lower one over 8–15.
  const seg = await series(page, 'segment mean');
  const before = seg.filter(([i, v]) => i < 8 && v !== '-').map(([, v]) => v);
  const after = seg.filter(([i, v]) => i >= 8 && v !== '-').map(([, v]) => v);
  assert.equal(before.length, 8);
  assert.equal(after.length, 8);
  assert.equal(new Set(before).size, 1);
  assert.equal(new Set(after).size, 1);
  assert.ok(after[0] < before[0] * 0.85, `the plateau fell: ${before[0]} → ${after[0]}`);
  assert.ok(seg.some(([i, v]) => i === 8 && v === '-'), 'a break between the segments');
  // The list: the plateau's change, with its size and p-value, linked to the ninth run.
  const item = page.locator('#history-changes li', { hasText: 'Throughput at the plateau fell' });
  assert.equal(await item.count(), 1);
  assert.match(await item.innerText(), /fell \d+ % here \([\d.]+ → [\d.]+ tok\/s, p = 0\.0\d\d\)/);
  assert.equal(await item.locator('a.change-run').getAttribute('href'), `/runs/${ids[8]}`);
  assert.match(await page.locator('#history-method').innerText(), /E-divisive means/);
  // The table marks the run that starts the new segment.
  const rows = page.locator('#history-table tbody tr');
  assert.equal(await rows.count(), 16);
  assert.equal(await page.locator('#history-table tbody tr.change-start').count(), 1);
  assert.match(await rows.nth(7).innerText(), /nightly 8\t/);
  assert.match(await rows.nth(7).getAttribute('class'), /change-start/);

  // Against all fifteen earlier runs, the newest run's plateau is below their mean: the
  // eight with the wider batch lift it.
  const gate = async (q = '') =>
    (await (await fetch(`${env.server.base}/api/v1/runs/${ids[15]}/check?history=true${q}`)).json()).report;
  const earlier = await gate('&window=15');
  assert.match(earlier.against, /\(15 runs\)/, JSON.stringify(earlier.against));
  assert.ok(earlier.curve.plateau.change_pct < -5, JSON.stringify(earlier.curve.plateau));

  // The ninth run's page proposes the change; accepted as a new baseline.
  await item.locator('a.change-run').click();
  await page.waitForURL(new RegExp(`/runs/${ids[8]}$`));
  const proposal = page.locator('#anomalies li', { hasText: 'Throughput at the plateau fell' });
  await proposal.waitFor();
  await proposal.locator('input[name=new_baseline]').check();
  await proposal.locator('button.accept-proposal').click();
  await page.waitForURL(new RegExp(`/runs/${ids[8]}#annotation-\\d+$`));
  const note = page.locator('#annotations li.annotation', { hasText: 'Throughput at the plateau fell' });
  assert.match(await note.innerText(), /new baseline/);
  assert.equal(await page.locator('#anomalies li', { hasText: 'Throughput at the plateau fell' }).count(), 0, 'handled');

  // The gate of the newest run now compares with the runs from the ninth on only, and
  // their plateau is its own: on the model clock, exactly the same, so nothing regressed.
  const rebased = await gate();
  assert.match(rebased.against, /\(7 runs\)/, JSON.stringify(rebased.against));
  assert.deepEqual(rebased.judged_against.map((r) => r.id).sort(), ids.slice(8, 15).sort());
  const p = rebased.curve.plateau;
  assert.ok(earlier.curve.plateau.reference_tok_s > p.reference_tok_s * 1.05, JSON.stringify([earlier.curve.plateau, p]));
  assert.equal(p.change_pct, 0, JSON.stringify(p));
  assert.deepEqual(rebased.findings.filter((f) => f.regression), [], JSON.stringify(rebased.findings));
  // The history marks where the baseline starts.
  await page.goto(`${env.server.base}/runs/${ids[15]}/history`);
  await page.locator('#chart-history canvas').waitFor();
  const starts = await series(page, 'new baseline starts');
  assert.deepEqual(starts.map(([i]) => i), [8]);
  assert.match(await page.locator('#history-table tbody tr').nth(7).innerText(), /new baseline/);
  assert.deepEqual(errors, []);
  await page.close();
});
