/**
 * Run as a child process with TMPDIR set to an empty directory: times @sparticuz/chromium's first
 * executablePath(), which decompresses Chromium (and its fonts and SwiftShader) into the temp dir.
 * Prints one JSON line.
 */
import chromium from '@sparticuz/chromium';

chromium.setGraphicsMode = false;
const started = performance.now();
const path = await chromium.executablePath();
const firstMs = performance.now() - started;
const again = performance.now();
await chromium.executablePath();
const cachedMs = performance.now() - again;
console.log(JSON.stringify({ path, firstMs, cachedMs }));
