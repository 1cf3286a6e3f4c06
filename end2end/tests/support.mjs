// Shared set-up for the browser tests: a real `plateau serve --demo` on a free loopback
// port with its own SQLite file, and Debian's chromium driven by playwright-core.
import { before, after } from 'node:test';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = process.env.PLATEAU_FIXTURES
  ? resolve(process.env.PLATEAU_FIXTURES)
  : resolve(ROOT, '..', 'shared', 'fixtures');
export const STORY_FILE = join(FIXTURES, 'seed-benchmark-py', 'kimi-k25-nvfp4-chat-c32-c96.txt');

/** A loopback port free right now. */
export function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/**
 * Waits until `url` answers 200, at most `seconds`; fails at once if `child` (what `what`
 * names) exits first.
 */
export async function waitUntilUp(child, url, what, seconds) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) throw new Error(`${what} did not start within ${seconds} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts plateau with the demo data; resolves once /healthz answers. The browser assets
 * come from the binary itself, as a team runs it (`PLATEAU_SITE_ROOT` serves a folder
 * instead). `opts.bin` and `opts.cwd` run another binary (an unpacked package) elsewhere.
 */
export async function startServer(opts = {}) {
  const bin = opts.bin || process.env.PLATEAU_BIN || join(ROOT, 'target', 'debug', 'plateau');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run .ci/build first`);
  const dir = opts.cwd || mkdtempSync(join(tmpdir(), 'plateau-e2e-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const site = process.env.PLATEAU_SITE_ROOT ? ['--site-root', process.env.PLATEAU_SITE_ROOT] : [];
  const env = { ...process.env, PLATEAU_FIXTURES: FIXTURES, RUST_LOG: 'warn' };
  delete env.LEPTOS_SITE_ROOT;
  const child = spawn(bin, ['serve', '--demo', '--addr', `127.0.0.1:${port}`, '--db', join(dir, 'e2e.db'), ...site], {
    env,
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitUntilUp(child, `${base}/healthz`, 'plateau', 30);
  return {
    base,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      if (!opts.cwd) rmSync(dir, { recursive: true, force: true });
      return child.exitCode;
    },
  };
}

/**
 * Starts plateau (demo data) and a browser before the calling file's tests, and closes
 * both after them: `const env = withAppAndBrowser();`, then `env.server.base` and
 * `env.browser.newPage()` in the tests. `ready(env)`, when given, runs once both are up
 * (a file's set-up that needs the server).
 */
export function withAppAndBrowser(ready) {
  const env = {};
  before(async () => {
    env.server = await startServer();
    env.browser = await launchBrowser();
    if (ready) await ready(env);
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });
  return env;
}

/** Starts `plateau sim` (fast: 5 ms per decode step) on a free loopback port; `extra`:
 * more of its options (`['--max-batch', '4']`). */
export async function startSim(extra = []) {
  const bin = process.env.PLATEAU_BIN || join(ROOT, 'target', 'debug', 'plateau');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // 5 ms steps (+ 0.5 ms a sequence) unless the test names its own
  const step = extra.includes('--decode-ms') ? [] : ['--decode-ms', '5', '--per-seq-ms', '0.5'];
  const args = ['sim', '--addr', `127.0.0.1:${port}`, ...step, ...extra];
  const child = spawn(bin, args, {
    env: { ...process.env, RUST_LOG: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitUntilUp(child, `${url}/health`, 'plateau sim', 15);
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
    },
  };
}

export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Collects console errors and uncaught exceptions of a page, to assert there are none. */
export function watchErrors(page) {
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}

/** Number of data points ECharts holds in series `i` of the chart in element `id`. */
export function seriesLength(page, id, i) {
  return page.evaluate(([id, i]) => {
    const el = document.getElementById(id);
    const chart = el && window.echarts && window.echarts.getInstanceByDom(el);
    if (!chart) return -1;
    const s = chart.getOption().series[i];
    return s ? s.data.length : -1;
  }, [id, i]);
}

/**
 * Opens `path` in a new context `width` × 900 px wide and waits until every chart on it is
 * drawn (`needCharts`: and that it has at least one). Returns the context, the page and the
 * console errors seen (closing the context is the caller's).
 */
export async function openDrawn(env, width, path, { needCharts = false } = {}) {
  const ctx = await env.browser.newContext({ viewport: { width, height: 900 } });
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await page.goto(env.server.base + path);
  await page.waitForFunction((need) => {
    const els = [...document.querySelectorAll('.chart')];
    return (!need || els.length > 0) && !!window.echarts && els.every((el) => window.echarts.getInstanceByDom(el));
  }, needCharts, { timeout: 20_000 });
  return { ctx, page, errors };
}
