import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assetDirectories, loadDashboardAssets } from './dashboard-assets';
import { dashboardPage } from './ops-dashboard.page';

describe('dashboard assets', () => {
  let scratch: string;
  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'ops-dashboard-'));
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  const writeAssets = (dir: string, js: string, css: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'dashboard.js'), js);
    writeFileSync(join(dir, 'dashboard.css'), css);
  };

  it('looks beside the module first, then in the source tree next to dist/', () => {
    expect(assetDirectories('/app/dist/modules/ops-dashboard')).toEqual(['/app/dist/modules/ops-dashboard/assets', '/app/src/modules/ops-dashboard/assets']);
    expect(assetDirectories('/app/src/modules/ops-dashboard')[0]).toBe('/app/src/modules/ops-dashboard/assets');
  });

  it('reads the real files under src with their content types and a content version', () => {
    const assets = loadDashboardAssets();
    const js = readFileSync(join(__dirname, 'assets', 'dashboard.js'));
    expect(assets['dashboard.js']).toEqual({
      body: js,
      contentType: 'text/javascript; charset=utf-8',
      version: createHash('sha256').update(js).digest('hex').slice(0, 12),
    });
    expect(assets['dashboard.css'].contentType).toBe('text/css; charset=utf-8');
  });

  it('takes the first directory that holds every file', () => {
    const partial = join(scratch, 'partial');
    mkdirSync(partial);
    writeFileSync(join(partial, 'dashboard.js'), 'one();');
    const complete = join(scratch, 'complete');
    writeAssets(complete, 'two();', 'body{}');
    const assets = loadDashboardAssets([partial, complete]);
    expect(assets['dashboard.js'].body.toString()).toBe('two();');
    expect(assets['dashboard.css'].body.toString()).toBe('body{}');
  });

  it('gives each content its own version, so a new build is fetched rather than cached', () => {
    writeAssets(join(scratch, 'a'), 'a();', 'a{}');
    writeAssets(join(scratch, 'b'), 'b();', 'a{}');
    const a = loadDashboardAssets([join(scratch, 'a')]);
    const b = loadDashboardAssets([join(scratch, 'b')]);
    expect(a['dashboard.js'].version).not.toBe(b['dashboard.js'].version);
    expect(a['dashboard.css'].version).toBe(b['dashboard.css'].version);
    expect(dashboardPage(a)).toContain(`ops/assets/dashboard.js?v=${a['dashboard.js'].version}`);
    expect(dashboardPage(b)).toContain(`ops/assets/dashboard.js?v=${b['dashboard.js'].version}`);
  });

  it('says where it looked when no directory has them', () => {
    const empty = join(scratch, 'empty');
    expect(() => loadDashboardAssets([empty, join(scratch, 'missing')])).toThrow(
      `The ops dashboard's files (dashboard.js, dashboard.css) are in none of: ${empty}, ${join(scratch, 'missing')}`,
    );
  });
});
