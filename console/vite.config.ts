import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

// Assets go under /assets/ (no clash with /V2, /docs, /auth, /gateways, /metrics).
// Nothing is inlined as a data: URI and there is no inline script, so the server's
// content security policy can allow only its own origin.
// Three entries: the console (`index.html`), the worker app (`worker/index.html`, served at
// `/worker/`) and the worker app's service worker, which keeps a fixed name in its scope
// (`/worker/sw.js`: a service worker's URL cannot change with each build).
export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      input: { console: here('index.html'), worker: here('worker/index.html'), sw: here('src/worker/sw.ts') },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'sw' ? 'worker/sw.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});
