import { defineConfig } from 'vitest/config';

// Assets go under /assets/ (no clash with /V2, /docs, /auth, /gateways, /metrics).
// Nothing is inlined as a data: URI and there is no inline script, so the server's
// content security policy can allow only its own origin.
export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    chunkSizeWarningLimit: 1024,
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});
