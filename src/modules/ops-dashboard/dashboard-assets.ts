import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The dashboard's static files and the content type each is served with. */
export const DASHBOARD_ASSET_TYPES = {
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
} as const;

export type DashboardAssetName = keyof typeof DASHBOARD_ASSET_TYPES;

export interface DashboardAsset {
  body: Buffer;
  contentType: string;
  /** A short hash of the content: the page links `?v=<version>` so a new build is fetched at once. */
  version: string;
}

export type DashboardAssets = Record<DashboardAssetName, DashboardAsset>;

/**
 * Where the files may be: beside this module (the sources under jest and ts-node, or dist/
 * when the build copies them), else the source tree next to dist/ (`npm start` from a checkout,
 * where tsc alone emits no .js/.css assets).
 */
export function assetDirectories(moduleDir: string = __dirname): string[] {
  return [join(moduleDir, 'assets'), resolve(moduleDir, '../../../src/modules/ops-dashboard/assets')];
}

/** Reads every asset from the first directory that holds them all; throws naming where it looked. */
export function loadDashboardAssets(directories: string[] = assetDirectories()): DashboardAssets {
  const names = Object.keys(DASHBOARD_ASSET_TYPES) as DashboardAssetName[];
  const directory = directories.find((dir) => names.every((name) => existsSync(join(dir, name))));
  if (!directory) {
    throw new Error(`The ops dashboard's files (${names.join(', ')}) are in none of: ${directories.join(', ')}`);
  }
  const assets = {} as DashboardAssets;
  for (const name of names) {
    const body = readFileSync(join(directory, name));
    assets[name] = {
      body,
      contentType: DASHBOARD_ASSET_TYPES[name],
      version: createHash('sha256').update(body).digest('hex').slice(0, 12),
    };
  }
  return assets;
}
