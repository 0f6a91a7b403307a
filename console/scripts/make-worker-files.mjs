// Writes the worker app's manifest and icon into public/worker/ (copied as they are into
// dist/worker/, served at /worker/manifest.webmanifest and /worker/icon.svg): installable
// (name, icons, `display: standalone`, start URL and scope `/worker/`), nothing loaded
// from elsewhere.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'public', 'worker');
mkdirSync(dir, { recursive: true });

const manifest = {
  name: 'safetrack — worker',
  short_name: 'safetrack',
  description: 'SOS, check-ins and your working-alone session.',
  start_url: '/worker/',
  scope: '/worker/',
  display: 'standalone',
  orientation: 'portrait',
  background_color: '#ffffff',
  theme_color: '#b3261e',
  icons: [
    { src: '/worker/icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'any' },
    { src: '/worker/icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'maskable' },
  ],
};
writeFileSync(join(dir, 'manifest.webmanifest'), JSON.stringify(manifest, null, 2) + '\n');

// A white cross on a red disc, inside the maskable safe zone.
const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">
  <rect width="512" height="512" fill="#b3261e"/>
  <circle cx="256" cy="256" r="150" fill="#ffffff"/>
  <path d="M226 166h60v60h60v60h-60v60h-60v-60h-60v-60h60z" fill="#b3261e"/>
</svg>
`;
writeFileSync(join(dir, 'icon.svg'), icon);
