// The release package as a team receives it: `.ci/package` wraps the release binary
// (PLATEAU_BIN) with its licenses, README, systemd unit and example settings; unpacked into
// an empty folder, the binary alone serves the demo — pages, wasm, styles and charts all
// from inside it — and stops cleanly on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startServer, launchBrowser, watchErrors } from './support.mjs';

test('the package unpacked into an empty folder is the whole app', async () => {
  const bin = process.env.PLATEAU_BIN || join(ROOT, 'target', 'release', 'plateau');
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  assert.match(version, /^plateau \d+\.\d+\.\d+ \(commit [0-9a-f]{12}\)$/);
  const head = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim();
  assert.ok(version.includes(head), `${version} names the commit ${head}`);

  execFileSync(join(ROOT, '.ci', 'package'), ['--no-build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const semver = version.split(' ')[1];
  const tarball = join(ROOT, 'target', 'package', `plateau-${semver}-x86_64-linux.tar.gz`);
  const dir = mkdtempSync(join(tmpdir(), 'plateau-package-'));
  try {
    execFileSync('tar', ['-xzf', tarball, '-C', dir]);
    const home = join(dir, `plateau-${semver}-x86_64-linux`);
    assert.deepEqual(readdirSync(home).sort(),
      ['LICENSE', 'README.md', 'THIRD-PARTY-LICENSES', 'plateau', 'plateau.service', 'plateau.toml']);
    assert.ok(statSync(join(home, 'THIRD-PARTY-LICENSES')).size > 100_000, 'the crates\u2019 license texts are in');

    // Only the unpacked binary and an empty working folder: no repository, no site folder.
    const work = mkdtempSync(join(tmpdir(), 'plateau-empty-'));
    const server = await startServer({ bin: join(home, 'plateau'), cwd: work });
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const errors = watchErrors(page);
      await page.goto(`${server.base}/`);
      const href = await page.locator('table a[href^="/runs/"]').first().getAttribute('href');
      const assets = [];
      page.on('response', (r) => { if (new URL(r.url()).pathname.startsWith('/pkg/')) assets.push([r.url(), r.status()]); });
      await page.goto(`${server.base}${href}`, { waitUntil: 'networkidle' });
      // Charts drawn by the hydrated app and the stylesheet applied: the wasm, its glue,
      // ECharts and the CSS all came from the binary.
      await page.locator('#chart-throughput canvas').waitFor({ timeout: 15_000 });
      assert.ok(assets.some(([u]) => u.endsWith('_bg.wasm')), 'the wasm was fetched');
      assert.ok(assets.every(([, s]) => s === 200 || s === 304), JSON.stringify(assets));
      const rules = await page.evaluate(() => [...document.styleSheets]
        .filter((s) => s.href && new URL(s.href).pathname.startsWith('/pkg/plateau-'))
        .reduce((n, s) => n + s.cssRules.length, 0));
      assert.ok(rules > 50, `the stylesheet from the binary applies (${rules} rules)`);
      assert.deepEqual(errors, []);
      // The working folder holds only the database the demo was stored in.
      assert.deepEqual(readdirSync(work).filter((f) => !f.startsWith('e2e.db')), []);
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0, 'SIGTERM stops it with exit status 0');
      rmSync(work, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
